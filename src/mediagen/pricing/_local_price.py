"""A request's list price computed on this machine from its model's catalog entry alone.

The catalog states every price as data (docs/wire-contract.md, "Model catalog entry": the
mode's ``price`` object with its tables, multipliers, per-input credits, derived fields and the
sources of the billable duration), so a form can show what a change costs the moment it is
made, before the service's estimate answers. The service stays the judge: this is a
provisional price. Where the price depends on something only the service knows (the length of
an uploaded file it measures), the price is reported unknown and says why; it never guesses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from mediagen.pricing._durations import _list_at, _seconds, _Unknown
from mediagen.pricing.catalog import Catalog, catalog_for

__all__ = ["LocalPrice", "local_price"]


@dataclass(frozen=True)
class LocalPrice:
    """``credits`` is the list price (before discounts), or None with ``unknown`` saying why."""

    credits: float | None
    billable_duration_seconds: float | None = None
    unknown: str | None = None

    @property
    def known(self) -> bool:
        return self.credits is not None


def _key(value: Any) -> str:
    """A value as price tables and multipliers spell it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _characters(price: Mapping[str, Any], values: Mapping[str, Any]) -> int:
    texts: list[Any] = []
    for path in price.get("characters") or []:
        name, _, key = path.partition("[].")
        if key:
            texts.extend(
                item.get(key) for item in _list_at(values, name) if isinstance(item, Mapping)
            )
        else:
            texts.append(values.get(name))
    return sum(len(t) for t in texts if isinstance(t, str))


def _inputs(value: Any) -> int:
    if isinstance(value, list):
        return len(value)
    return 0 if value is None or value == "" else 1


def _per_unit(price: Mapping[str, Any], values: Mapping[str, Any]) -> Decimal:
    if "by" not in price:
        if price.get("credits") is None:
            raise _Unknown("the catalog states no price for this mode")
        return Decimal(str(price["credits"]))
    key = "|".join(_key(values.get(f)) for f in str(price["by"]).split("|"))
    if key not in (price.get("table") or {}):
        raise _Unknown(f"no price for {key!r} (priced: {', '.join(price.get('table') or {})})")
    return Decimal(str(price["table"][key]))


def _quantity(price: Mapping[str, Any], values: Mapping[str, Any], known: Mapping) -> tuple:
    """(units priced, billable seconds or None)."""
    unit = price.get("unit")
    if unit == "second":
        seconds = _seconds(price, values, known)
        if seconds is None:
            raise _Unknown("no duration to price per second")
        billable = round(seconds, 3)
        return Decimal(str(billable)), billable
    if unit == "character":
        return Decimal(_characters(price, values)), None
    count = values.get(price["count"]) if price.get("count") else None
    return Decimal(max(1, int(count or 1))), None


def local_price(
    entry: Mapping[str, Any] | Catalog | Any,
    request: Mapping[str, Any],
    *,
    asset_seconds: Mapping[str, float] | None = None,
) -> LocalPrice:
    """The list price of ``request`` by its mode's catalog price, rounded half-up to cents.

    ``asset_seconds`` maps asset ids to lengths the caller knows (a file it uploaded and
    measured); without it a price that counts an input file's seconds is unknown.
    """
    catalog = catalog_for(entry)
    mode = catalog.mode_for(request)
    if mode is None:
        return LocalPrice(None, unknown="no mode to price")
    price = mode.get("price") or {}
    values = {**(mode.get("defaults") or {}), **{k: v for k, v in request.items() if v is not None}}
    for name, rule in (price.get("derive") or {}).items():
        source = values.get(rule["from"])
        if source is not None and _key(source) in rule["map"]:
            values[name] = rule["map"][_key(source)]
    try:
        quantity, billable = _quantity(price, values, asset_seconds or {})
        total = _per_unit(price, values) * quantity
    except _Unknown as why:
        return LocalPrice(None, unknown=str(why))
    for name, table in (price.get("multipliers") or {}).items():
        if values.get(name) is not None and _key(values[name]) in table:
            total *= Decimal(str(table[_key(values[name])]))
    for name, each in (price.get("per_input") or {}).items():
        total += Decimal(str(each)) * _inputs(values.get(name))
    credits = float(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    return LocalPrice(credits, billable)

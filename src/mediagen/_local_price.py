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

from mediagen.catalog import Catalog, catalog_for

__all__ = ["LocalPrice", "local_price", "stated_seconds"]


@dataclass(frozen=True)
class LocalPrice:
    """``credits`` is the list price (before discounts), or None with ``unknown`` saying why."""

    credits: float | None
    billable_duration_seconds: float | None = None
    unknown: str | None = None

    @property
    def known(self) -> bool:
        return self.credits is not None


class _Unknown(Exception):
    """The price cannot be computed here; the message says what is missing."""


def _key(value: Any) -> str:
    """A value as price tables and multipliers spell it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _list_at(values: Mapping[str, Any], path: str) -> list:
    node: Any = values
    for step in path.split("."):
        node = node.get(step) if isinstance(node, Mapping) else None
    return node if isinstance(node, list) else []


def _field_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    value = values.get(source["field"])
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if number and value else None


def _summed_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    parts = [p for p in _list_at(values, source["sum"]) if isinstance(p, Mapping)]
    return float(sum(p.get(source["of"], 0) for p in parts)) if parts else None


def _ratio_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    top, bottom = (values.get(f) for f in source["divide"])
    return round(top / bottom, source.get("round", 3)) if top is not None and bottom else None


def _file_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    asset = values.get(source["asset"])
    if asset is None:
        return None
    if asset not in known:
        raise _Unknown(
            f"priced by the length of the {source['asset']} file (measured by the service)"
        )
    return float(known[asset])


def _default_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    return float(source["default"])


#: How each kind of ``price.duration`` source gives seconds (None: it gives none here).
_DURATION_SOURCES = {
    "field": _field_seconds,
    "sum": _summed_seconds,
    "divide": _ratio_seconds,
    "asset": _file_seconds,
    "default": _default_seconds,
}


def _seconds(price: Mapping[str, Any], values: Mapping[str, Any], known: Mapping) -> float | None:
    """Billable seconds from the first ``price.duration`` source that applies and gives one."""
    for source in price.get("duration") or []:
        when = source.get("when") or {}
        if any(values.get(k) != v for k, v in when.items()):
            continue
        kind = next((k for k in _DURATION_SOURCES if k in source), None)
        seconds = _DURATION_SOURCES[kind](source, values, known) if kind else None
        if seconds is not None:
            return seconds
    return None


def stated_seconds(price: Mapping[str, Any], values: Mapping[str, Any]) -> float | None:
    """The billable seconds a request states itself; None when an input file's length (or,
    for a request naming none, the service's default) decides."""
    sources = [s for s in price.get("duration") or [] if "default" not in s]
    try:
        return _seconds({"duration": sources}, values, {})
    except _Unknown:
        return None


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

"""List prices from a mode's ``price`` object (docs/wire-contract.md, "Model catalog entry").

Everything a price depends on is stated in that object, so a client can price a request from
the catalog entry alone and the service prices estimates and submits from the same data:

- ``unit``: ``second`` (x billable duration), ``generation`` / ``image`` / ``output`` (x the
  number of outputs, read from the field ``count`` names), ``character`` (x the length of the
  texts ``characters`` names).
- ``by`` names the field(s), joined ``|``, whose values select the per-unit price from
  ``table``; without ``by``, ``credits`` is the per-unit price.
- ``multipliers[field][str(value)]`` multiply the total (booleans keyed ``"true"``/``"false"``).
- ``per_input[field]`` adds that many credits per input given in ``field`` (per reference
  image, say), after the multipliers.
- ``derive[field]`` fills a priced field from another: ``{"from": name, "map": {value: ...}}``.
- ``duration`` lists where the billable seconds come from, the first source that gives a value
  winning (a source with ``when`` only applies when those fields have those values):
  ``{"field": f}``, ``{"sum": list_path, "of": key}``, ``{"divide": [a, b], "round": n}``,
  ``{"asset": f}`` (the length of the input file in ``f``: only the service can measure it),
  ``{"default": seconds}`` (what an estimate that names no such file prices).
- ``duration_query`` is the request field an estimate's ``duration_seconds`` sets; without it
  that number is the billable duration itself.

The list price is rounded half-up to 2 decimals.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ._types import fail

UNIT_WORDS = {
    "second": "per second",
    "generation": "per generation",
    "image": "per image",
    "output": "per output",
    "character": "per character",
}


def key_of(value: object) -> str:
    """How a value is spelled in price tables and multipliers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _dec(value: float | int) -> Decimal:
    return Decimal(str(value))


def derive(price_def: dict, values: dict) -> None:
    """Fill the fields ``price.derive`` states from the fields they follow (in place)."""
    for name, rule in price_def.get("derive", {}).items():
        source = values.get(rule["from"])
        if source is not None and key_of(source) in rule["map"]:
            values[name] = rule["map"][key_of(source)]


def items_at(values: dict, path: str) -> list:
    """The list at a dotted ``path`` (``composition_plan.sections``), or [] when absent."""
    found: Any = values
    for step in path.split("."):
        found = found.get(step) if isinstance(found, dict) else None
    return found if isinstance(found, list) else []


AssetSeconds = Callable[[str], "float | None"]


def _from_field(source: dict, values: dict, asset_seconds: AssetSeconds) -> float | None:
    value = values.get(source["field"])
    return float(value) if isinstance(value, (int, float)) and value else None


def _from_sum(source: dict, values: dict, asset_seconds: AssetSeconds) -> float | None:
    parts = items_at(values, source["sum"])
    return float(sum(p.get(source["of"], 0) for p in parts)) if parts else None


def _from_ratio(source: dict, values: dict, asset_seconds: AssetSeconds) -> float | None:
    top, bottom = (values.get(f) for f in source["divide"])
    if top is None or not bottom:
        return None
    return round(top / bottom, source.get("round", 3))


def _from_asset(source: dict, values: dict, asset_seconds: AssetSeconds) -> float | None:
    return asset_seconds(source["asset"]) if values.get(source["asset"]) is not None else None


def _from_default(source: dict, values: dict, asset_seconds: AssetSeconds) -> float | None:
    return float(source["default"])


_SOURCES = {
    "field": _from_field,
    "sum": _from_sum,
    "divide": _from_ratio,
    "asset": _from_asset,
    "default": _from_default,
}


def billable_seconds(
    price_def: dict, values: dict, asset_seconds: AssetSeconds = lambda name: None
) -> float | None:
    """The seconds a per-second price counts, from the first ``duration`` source that gives
    one. A named input file stops the search: its length, or nothing (never the default)."""
    for source in price_def.get("duration", []):
        if any(values.get(k) != v for k, v in source.get("when", {}).items()):
            continue
        kind = next(k for k in _SOURCES if k in source)
        seconds = _SOURCES[kind](source, values, asset_seconds)
        if seconds is not None or (kind == "asset" and values.get(source["asset"]) is not None):
            return seconds
    return None


def text_length(price_def: dict, values: dict) -> int:
    """Characters of the texts ``price.characters`` names (``segments[].text``: each item's)."""
    total = 0
    for path in price_def.get("characters", []):
        name, _, key = path.partition("[].")
        texts = [i.get(key) for i in items_at(values, name)] if key else [values.get(name)]
        total += sum(len(t) for t in texts if isinstance(t, str))
    return total


def input_count(value: Any) -> int:
    """How many inputs a field's value gives (a list's length; one for a single id)."""
    if isinstance(value, list):
        return len(value)
    return 0 if value in (None, "") else 1


def price(
    price_def: dict,
    values: dict,
    *,
    duration: float | None,
    characters: int | None = None,
    inputs: dict[str, int] | None = None,
    where: str = "body",
    names: dict[str, str] | None = None,
) -> tuple[float, float | None]:
    """(list credits, billable duration or None) of a request whose mode prices by ``price_def``.

    ``values`` are the request's values with defaults applied and derived values filled;
    ``duration`` its billable seconds (``billable_seconds``). An estimate states some
    quantities outright: ``characters`` and ``inputs`` (per ``per_input`` field) then replace
    the ones counted from ``values``. ``names`` maps a request field to the name the caller used.
    """
    names = names or {}
    if "by" in price_def:
        fields = price_def["by"].split("|")
        for f in fields:
            if values.get(f) is None:
                raise fail(names.get(f, f), f"needed to price this request ({f})", "missing", where)
        key = "|".join(key_of(values[f]) for f in fields)
        if key not in price_def["table"]:
            bad = fields[0] if len(fields) == 1 else "|".join(fields)
            raise fail(
                names.get(fields[0], bad),
                f"no price for {key!r}; priced values: {', '.join(price_def['table'])}",
                "value_not_allowed",
                where,
            )
        per_unit = _dec(price_def["table"][key])
    else:
        per_unit = _dec(price_def["credits"])
    unit = price_def["unit"]
    billable = None
    if unit == "second":
        billable = round(float(duration or 0.0), 3)
        quantity = _dec(billable)
    elif unit == "character":
        count = characters if characters is not None else text_length(price_def, values)
        quantity = Decimal(int(count))
    else:
        quantity = Decimal(max(1, int(values.get(price_def.get("count", ""), 1) or 1)))
    total = per_unit * quantity
    for f, table in price_def.get("multipliers", {}).items():
        value = values.get(f)
        if value is not None and key_of(value) in table:
            total *= _dec(table[key_of(value)])
    stated = inputs or {}
    for f, each in price_def.get("per_input", {}).items():
        total += _dec(each) * Decimal(stated[f] if f in stated else input_count(values.get(f)))
    credits = float(total.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    return credits, billable


def _fmt(value: float) -> str:
    return f"{value:g}"


def price_summary(modes: list[dict]) -> str:
    """A one-line human summary, e.g. ``"2-8 credits per second"``."""
    lows, highs, units = [], [], []
    for m in modes:
        p = m["price"]
        numbers = list(p["table"].values()) if "table" in p else [p["credits"]]
        low, high = min(numbers), max(numbers)
        for table in p.get("multipliers", {}).values():
            low *= min([1.0, *table.values()])
            high *= max([1.0, *table.values()])
        lows.append(low)
        highs.append(high)
        if UNIT_WORDS[p["unit"]] not in units:
            units.append(UNIT_WORDS[p["unit"]])
    low, high = min(lows), max(highs)
    amount = _fmt(round(low, 4)) if low == high else f"{_fmt(round(low, 4))}-{_fmt(round(high, 4))}"
    return f"{amount} credits {' or '.join(units)}"

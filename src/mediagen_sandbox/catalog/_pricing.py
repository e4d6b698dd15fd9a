"""List prices from a mode's ``price`` object (docs/wire-contract.md, "Model catalog entry").

``unit``: ``second`` (x billable duration), ``generation`` / ``image`` / ``output``
(x the number of outputs), ``character`` (x text length). ``by`` names the field(s), joined
``|``, whose values select the per-unit price from ``table``; without ``by``, ``credits`` is the
per-unit price. ``multipliers[field][str(value)]`` multiply the total (booleans keyed
``"true"``/``"false"``). ``per_input[field]`` adds that many credits per input given in
``field`` (per reference image, say), after the multipliers. The list price is rounded half-up
to 2 decimals.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

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


def price(
    price_def: dict,
    values: dict,
    *,
    duration: float | None,
    count: int,
    text_length: int,
    where: str = "body",
    names: dict[str, str] | None = None,
    inputs: dict[str, int] | None = None,
) -> tuple[float, float | None]:
    """(list credits, billable duration or None) of a request whose mode prices by ``price_def``.

    ``values`` are the request's values with defaults applied (and derived values filled).
    ``names`` maps a request field to the name the caller used (estimate query names);
    ``inputs`` counts the inputs of each field ``per_input`` prices.
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
        quantity = Decimal(int(text_length))
    else:
        quantity = Decimal(max(1, int(count)))
    total = per_unit * quantity
    for f, table in price_def.get("multipliers", {}).items():
        value = values.get(f)
        if value is not None and key_of(value) in table:
            total *= _dec(table[key_of(value)])
    for f, each in price_def.get("per_input", {}).items():
        total += _dec(each) * Decimal(int((inputs or {}).get(f, 0)))
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

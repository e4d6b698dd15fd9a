"""The catalog's verdicts on a ``%%mediagen`` request, worded for the cell's user.

Nothing is judged here: ``Catalog.problems`` (the engine behind ``Catalog.validate``, which the
client's local checks, batches and the studio's form also ask) says what is wrong and what it
held the value against (``ctx``); this module only says it in the magic's terms, naming the
flag the user typed (``--tier``) or the cell body, and what is allowed instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mediagen.magics._cell_line import MagicUsageError, did_you_mean
from mediagen.magics._values import show_values
from mediagen.pricing.catalog import Catalog


@dataclass(frozen=True)
class _Cell:
    """What a verdict is worded against: the entry, the request, and how the cell names them."""

    catalog: Catalog
    request: Mapping[str, Any]
    text_field: str

    def flag(self, name: str) -> str:
        """How the user gave ``name`` (an entry of a structured field is the field's flag)."""
        name = name.split(".")[0]
        return f"the cell body ({name})" if name == self.text_field else f"--{name}"

    @property
    def mode_id(self) -> str | None:
        return self.request.get("mode")

    @property
    def where(self) -> str:
        """The model, with its mode when it has several to choose from."""
        if self.catalog.mode_required:
            return f"{self.catalog.id} ({self.mode_id})"
        return self.catalog.id


def refuse_if_invalid(
    entry: Mapping[str, Any], request: Mapping[str, Any], kind: str, text_field: str
) -> None:
    """Raise ``MagicUsageError`` with every problem the catalog finds in ``request``, one line
    each (the required fields missing said together); return when it finds none."""
    catalog = Catalog(entry)
    problems = catalog.problems(request, kind)
    if not problems:
        return
    cell = _Cell(catalog, request, text_field)
    missing = [_field(p) for p in problems if p["ctx"].get("required")]
    lines = [
        _needs(cell, missing) if p["ctx"].get("required") else _word(cell, p) for p in problems
    ]
    raise MagicUsageError("\n".join(dict.fromkeys(lines)))


def _field(problem: Mapping[str, Any]) -> str:
    return str(problem["loc"][-1])


def _needs(cell: _Cell, missing: list[str]) -> str:
    hint = " (the cell body)" if cell.text_field in missing else ""
    return f"{cell.where} needs {', '.join(missing)}{hint}"


def _word(cell: _Cell, problem: Mapping[str, Any]) -> str:
    rule, name = problem["ctx"].get("rule"), _field(problem)
    wording = _rule_wording(cell, rule) if rule is not None else _WORDING.get(problem["type"])
    if isinstance(wording, str):
        return wording
    if wording is None:
        return f"{cell.flag(name)} {problem['msg']}"
    return wording(cell, name, cell.request.get(name), dict(problem["ctx"]))


def _not_allowed(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    allowed = list(ctx.get("allowed") or [])
    # A model of several modes is named with the mode, whose values these are.
    where = f" for {cell.where}" if cell.catalog.mode_required else ""
    at = f" at tier {ctx['tier']}" if ctx.get("tier") is not None else ""
    hint = did_you_mean(str(value), [str(a) for a in allowed])
    return (
        f"{cell.flag(name)}: {value!r} is not allowed{where}{at}{hint}; allowed values: "
        f"{show_values(allowed)}"
    )


def _unknown_voice(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    voices = ", ".join(map(str, ctx.get("allowed") or []))
    return f"{cell.flag(name)}: unknown voice {value!r}; voices: {voices}"


def _out_of_range(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    low, high = cell.catalog.range(name, cell.mode_id)
    if low is not None and high is not None:
        bounds = f"between {low} and {high}"
    else:
        bounds = f"at least {low}" if low is not None else f"at most {high}"
    return f"{cell.flag(name)} must be {bounds} (got {value})"


def _off_step(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    return f"{cell.flag(name)} must be a multiple of {ctx['multiple_of']} (got {value})"


def _too_many(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    return f"{cell.flag(name)} takes at most {ctx['max_length']} for {cell.where}"


def _too_long(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    return f"{cell.flag(name)} is at most {ctx['max_length']} characters"


def _not_accepted(cell: _Cell, name: str, value: Any, ctx: dict[str, Any]) -> str:
    others = [n for n in ctx.get("accepted") or [] if n != cell.text_field]
    fields = ", ".join(f"--{n}" for n in others) or "(none)"
    return f"{cell.flag(name)} is not accepted by {cell.where}; its fields are: {fields}"


#: How the magic words the catalog's verdicts (by the problem's ``type``); any other (a wrong
#: shape, a rule's bound, an alias naming no reference) is the catalog's message after the flag.
_WORDING: dict[str, Callable[[_Cell, str, Any, dict[str, Any]], str]] = {
    "value_not_allowed": _not_allowed,
    "unknown_voice": _unknown_voice,
    "greater_than_equal": _out_of_range,
    "less_than_equal": _out_of_range,
    "multiple_of": _off_step,
    "too_long": _too_many,
    "string_too_long": _too_long,
    "extra_forbidden_for_mode": _not_accepted,
}


def _rule_wording(cell: _Cell, rule: Mapping[str, Any]) -> str | None:
    """A broken rule over several fields, said of them all (the catalog said which rule);
    None for a rule about one field, which the catalog's message says after its flag."""
    fields = ", ".join(rule.get("fields") or [])
    if rule.get("kind") == "mutually_exclusive":
        return f"give only one of: {fields}"
    if rule.get("kind") == "one_of_required":
        return f"{cell.catalog.id} needs one of: {fields}"
    return None

"""From a catalog entry and a mode to form fields, inline checks and a request dict (pure).

The catalog is the source of truth (docs/wire-contract.md, "Model catalog entry"): a mode lists
``required`` and ``optional`` fields, ``allowed`` values (a list or ``{"by_tier": ...}``),
``ranges``, ``defaults`` and ``max_counts``; ``parameters`` gives each field's type and bounds;
``rules`` add cross-field checks. The verdicts on values and rules are
``mediagen.pricing.catalog``'s (the same that ``Catalog.validate`` gives the client's local
checks and batches); this module reads what the user typed, lays out the controls and words each
verdict with the field's label. Nothing here does I/O, so all of it is unit-testable and the form
widget only renders what these functions return.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mediagen.pricing.catalog import (
    ALWAYS_ACCEPTED,
    JSON_TYPES,
    Catalog,
    reference_name_problems,
    rule_problems,
)

LONG_TEXT_FIELDS = {"prompt", "text", "lyrics", "negative_prompt", "previous_text", "next_text"}
#: Fields most requests set, shown up front even when a mode's example leaves them out.
COMMON_FIELDS = {
    "prompt",
    "text",
    "voice_name",
    "aspect_ratio",
    "duration_seconds",
    "quality",
    "size",
    "tier",
    "resolution",
}


def mode_of(entry: Mapping[str, Any], mode_id: str | None) -> Mapping[str, Any]:
    modes: list[Mapping[str, Any]] = entry.get("modes") or []
    for mode in modes:
        if mode.get("id") == mode_id:
            return mode
    if modes:
        return modes[0]
    raise ValueError(f"model {entry.get('id')!r} has no modes in its catalog entry")


def mode_fields(mode: Mapping[str, Any]) -> list[str]:
    """The mode's own fields, required first, in catalog order."""
    seen: list[str] = []
    for name in [*(mode.get("required") or []), *(mode.get("optional") or [])]:
        if name not in seen and name not in ALWAYS_ACCEPTED:
            seen.append(name)
    return seen


def example_values(entry: Mapping[str, Any], mode_id: str | None) -> dict[str, Any]:
    """Defaults of the mode, overlaid with its ``example_request`` (a ready-to-send start)."""
    mode = mode_of(entry, mode_id)
    values: dict[str, Any] = dict(mode.get("defaults") or {})
    example = mode.get("example_request") or (entry.get("example_request") or {}).get(mode["id"])
    for key, value in (example or {}).items():
        if key not in ALWAYS_ACCEPTED:
            values[key] = value
    fields = set(mode_fields(mode))
    return {k: v for k, v in values.items() if k in fields}


def main_fields(entry: Mapping[str, Any], mode: Mapping[str, Any]) -> set[str]:
    """The fields shown up front: required ones, what the example sets, what sets the price,
    one-of-required alternatives and the common ones. The rest goes under "Advanced"."""
    main = set(mode.get("required") or []) | COMMON_FIELDS
    example = mode.get("example_request") or (entry.get("example_request") or {}).get(mode["id"])
    main |= set(example or {})
    price = mode.get("price") or {}
    main |= set(str(price.get("by") or "").split("|")) | set(price.get("per_input") or {})
    for rule in entry.get("rules") or []:
        if rule.get("kind") == "one_of_required":
            main |= set(rule.get("fields") or [])
    return main


def start_values(
    entry: Mapping[str, Any],
    mode_id: str | None,
    given: Mapping[str, Any] | None = None,
    references: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What a freshly loaded form holds: the example, under what the user already chose.

    ``references`` (media kind -> asset id, the outputs the user picked "use as reference" on)
    fill the first reference input of their kind, replacing the example's sample asset, so a
    chained request never pays for the sample. ``given`` (what the user typed or chose in
    earlier forms) is kept for every field of this mode that accepts it; the example fills only
    what is left.
    """
    values = example_values(entry, mode_id)
    specs = field_specs(entry, mode_id, values)
    filled: set[str] = set()
    for kind, asset_id in (references or {}).items():
        for spec in specs:
            if spec["control"] == "reference" and spec.get("media") == kind:
                values[spec["name"]] = [asset_id] if spec.get("multiple") else asset_id
                filled.add(spec["name"])
                break
    names = {s["name"] for s in specs}
    kept = {k: v for k, v in (given or {}).items() if k in names and k not in filled}
    if kept:
        candidate = {**values, **kept}
        refused = check(entry, mode_id, candidate)
        values.update({k: v for k, v in kept.items() if k not in refused})
    return values


def _label(name: str) -> str:
    return name.replace("_", " ").capitalize()


def field_specs(
    entry: Mapping[str, Any], mode_id: str | None, values: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One JSON-ready spec per field of the mode: which control, its choices, bounds, default."""
    mode = mode_of(entry, mode_id)
    parameters = entry.get("parameters") or {}
    required = set(mode.get("required") or [])
    defaults = mode.get("defaults") or {}
    tier = Catalog(entry).tier_for(_chosen(values), mode["id"])
    main = main_fields(entry, mode)
    specs = []
    for name in sorted(mode_fields(mode), key=lambda n: n not in main):  # stable: main first
        parameter = parameters.get(name) or {}
        kind = parameter.get("type", "string")
        spec: dict[str, Any] = {
            "name": name,
            "label": _label(name),
            "type": kind,
            "required": name in required,
            "default": defaults.get(name),
            "help": parameter.get("description") or "",
            "advanced": name not in main,
        }
        spec.update(_control(entry, mode, name, tier))
        specs.append(spec)
    _merge_alternatives(entry, specs)
    return specs


def _control(
    entry: Mapping[str, Any], mode: Mapping[str, Any], name: str, tier: Any
) -> dict[str, Any]:
    """How a field is asked for: its control and what the control needs (choices at the
    current tier, bounds and step, a reference's media, a text's length), from the catalog."""
    catalog = Catalog(entry)
    parameter = catalog.parameter(name)
    kind = parameter.get("type", "string")
    if kind == "voice":
        options = [
            {"value": v.get("name") or v.get("id"), "label": _voice_label(v)}
            for v in catalog.voices
        ]
        return {"control": "select", "options": options}
    if kind in ("asset", "asset_list"):
        return {
            "control": "reference",
            "media": parameter.get("media", "image"),
            "multiple": kind == "asset_list",
            "max_count": catalog.max_counts(mode["id"]).get(name),
        }
    choices = catalog.allowed(name, mode["id"], tier)
    if choices is not None:
        return {
            "control": "select",
            "options": [{"value": v, "label": _choice_label(v)} for v in choices],
        }
    if kind == "boolean":
        return {"control": "toggle"}
    if kind in ("integer", "number"):
        minimum, maximum = catalog.range(name, mode["id"])
        step = parameter.get("multiple_of") or (1 if kind == "integer" else "any")
        return {"control": "number", "minimum": minimum, "maximum": maximum, "step": step}
    if kind == "string_list":
        return {"control": "list"}
    if kind in JSON_TYPES:
        return {"control": "json"}
    long_text = name in LONG_TEXT_FIELDS or (parameter.get("max_length") or 0) > 300
    return {
        "control": "textarea" if long_text else "text",
        "max_length": parameter.get("max_length"),
    }


def _merge_alternatives(entry: Mapping[str, Any], specs: list[dict[str, Any]]) -> None:
    """Two mutually exclusive choice fields (Pixel Pro's ``size`` and ``image_size``) are one
    question: the first shows both sets of choices, the second is not shown on its own."""
    by_name = {s["name"]: s for s in specs}
    for rule in entry.get("rules") or []:
        names = [n for n in rule.get("fields") or [] if n in by_name]
        if rule.get("kind") != "mutually_exclusive" or len(names) != 2:
            continue
        first, second = (by_name[n] for n in names)
        if first["control"] != "select" or second["control"] != "select":
            continue
        if "merged_into" in first or "merged_into" in second:
            continue
        second["merged_into"] = first["name"]
        first["alternative"] = {
            "name": second["name"],
            "label": second["label"],
            "options": second["options"],
            "help": second["help"],
        }
        first["advanced"] = first["advanced"] and second["advanced"]


def _voice_label(voice: Mapping[str, Any]) -> str:
    name = voice.get("name") or voice.get("id")
    language = voice.get("language")
    return f"{name} ({language})" if language else str(name)


def _choice_label(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _chosen(values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the user filled (an emptied field chooses nothing, not an empty tier)."""
    return {k: v for k, v in values.items() if not _is_empty(v)}


def coerce(spec: Mapping[str, Any], value: Any) -> Any:
    """A form value as the request wants it (numbers, lists, parsed JSON); raises ValueError."""
    if _is_empty(value):
        return None
    control, kind = spec["control"], spec["type"]
    if control == "list" and isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if control == "json" and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if kind == "integer":
        number = float(value)
        if not number.is_integer():
            raise ValueError("must be a whole number")
        return int(number)
    if kind == "number":
        return float(value)
    if kind == "boolean":
        return bool(value)
    return value


def check(
    entry: Mapping[str, Any], mode_id: str | None, values: Mapping[str, Any]
) -> dict[str, str]:
    """Problems to show inline before sending: ``{field: message}`` (``"_form"`` for rules).

    The form judges only what the typed text is (a number, JSON) and whether a required field
    is filled; every other verdict, on values and rules, is the catalog's, worded here with
    the fields' labels. As in ``Catalog.validate`` (and the service), a value of the wrong
    shape is reported alone, without the rule problems it would cause.
    """
    mode = mode_of(entry, mode_id)
    catalog = Catalog(entry)
    specs = {s["name"]: s for s in field_specs(entry, mode_id, values)}
    issues: dict[str, str] = {}
    parsed: dict[str, Any] = {}
    misshapen = False
    for name, spec in specs.items():
        try:
            value = coerce(spec, values.get(name))
        except (TypeError, ValueError) as exc:
            issues[name], misshapen = f"{spec['label']} {exc}", True
            continue
        if value is None:
            if spec["required"]:
                issues[name] = f"{spec['label']} is required"
            continue
        parsed[name] = value
    tier = catalog.tier_for(parsed, mode["id"])
    for name, value in parsed.items():
        problems = catalog.value_problems(name, value, mode["id"], tier)
        if problems:
            issues[name] = _word(specs[name]["label"], value, problems[0])
            misshapen = misshapen or problems[0]["type"] == "type_error"
    message = None if misshapen else _cross_field_issue(entry, parsed, specs, mode)
    return issues | ({"_form": message} if message else {})


def _cross_field_issue(
    entry: Mapping[str, Any],
    parsed: Mapping[str, Any],
    specs: Mapping[str, Any],
    mode: Mapping[str, Any],
) -> str | None:
    """The first cross-field problem (a rule of the entry, aliases naming no reference)."""
    defaults = dict(mode.get("defaults") or {})
    for rule in entry.get("rules") or []:
        message = _check_rule(rule, parsed, specs, defaults)
        if message:
            return message
    unmatched = reference_name_problems(parsed, defaults)
    return f"{_label('reference_names')}: {unmatched[0]['msg']}" if unmatched else None


#: How the form words each of the catalog's value verdicts (``ctx`` fills the blanks).
_WORDING = {
    "value_not_allowed": "{label} {value!r} is not available{where} (allowed: {shown})",
    "unknown_voice": "{label} {value!r} is not available{where} (allowed: {shown})",
    "greater_than_equal": "{label} must be at least {ge}",
    "less_than_equal": "{label} must be at most {le}",
    "multiple_of": "{label} must be a multiple of {multiple_of}",
    "too_long": "{label}: at most {max_length} (got {actual_length})",
    "string_too_long": "{label} is longer than {max_length} characters",
}


def _word(label: str, value: Any, problem: Mapping[str, Any]) -> str:
    """One catalog verdict on a field, in the form's words (its label, the value given)."""
    ctx = dict(problem.get("ctx") or {})
    template = _WORDING.get(str(problem.get("type")))
    if template is None:
        return f"{label} {problem['msg']}"
    tier = ctx.pop("tier", None)
    where = f" at {tier}" if tier is not None else ""
    shown = ", ".join(map(str, ctx.get("allowed") or []))
    return template.format(label=label, value=value, where=where, shown=shown, **ctx)


def _check_rule(
    rule: Mapping[str, Any],
    parsed: Mapping[str, Any],
    specs: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> str | None:
    """The rule's verdict comes from the catalog (as for every client-side check); the form
    only words it with the fields' labels."""
    if not rule_problems(rule, parsed, defaults):
        return None
    kind = rule.get("kind")
    names = " / ".join(_label(f) for f in rule.get("fields") or [] if f in specs)
    if kind == "mutually_exclusive":
        return f"Use only one of {names}"
    if kind == "one_of_required":
        return f"Give one of {names}"
    if kind == "requires":
        missing = [n for n in rule.get("needs") or [] if n not in parsed and n not in defaults]
        return f"{_label(str(rule.get('field')))} needs {' and '.join(map(_label, missing))}"
    if kind == "max_duration":
        condition = ", ".join(f"{_label(k)} = {v}" for k, v in (rule.get("when") or {}).items())
        return f"{_label(str(rule.get('field')))} is at most {rule.get('maximum')} when {condition}"
    return None


def build_request(
    entry: Mapping[str, Any], mode_id: str | None, values: Mapping[str, Any]
) -> dict[str, Any]:
    """The request body the form describes (empty fields left out; values coerced)."""
    mode = mode_of(entry, mode_id)
    request: dict[str, Any] = {"model": entry["id"]}
    if entry.get("mode_required") or mode.get("id") not in (None, "default"):
        request["mode"] = mode["id"]
    for spec in field_specs(entry, mode_id, values):
        try:
            value = coerce(spec, values.get(spec["name"]))
        except (TypeError, ValueError):
            value = values.get(spec["name"])
        if value is not None:
            request[spec["name"]] = value
    return request

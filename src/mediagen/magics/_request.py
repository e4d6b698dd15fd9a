"""The request a ``%%mediagen`` cell sends, checked against the model's catalog entry.

Pure functions over catalog entries as plain dicts (the shape of ``docs/wire-contract.md``): no
client, no IPython. The mode is chosen from the fields given, every field is typed by its schema
(``_values``), and the mode's allowed values, ranges, counts and rules are checked before
anything is sent; a mistake is a ``MagicUsageError`` naming what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mediagen.catalog import ALWAYS_ACCEPTED
from mediagen.magics._cell_line import CELL_USAGE, CellOptions, MagicUsageError, did_you_mean
from mediagen.magics._values import (
    AssetResolver,
    VariableLookup,
    check_bounds,
    convert_value,
    show_values,
)


def modes_of(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(entry.get("modes") or [{"id": "default", "required": [], "optional": []}])


def accepted_fields(mode: Mapping[str, Any]) -> list[str]:
    """The request fields a mode accepts, in catalog order."""
    names = [*mode.get("required", []), *mode.get("optional", []), *ALWAYS_ACCEPTED]
    return list(dict.fromkeys(names))


def prompt_field(entry: Mapping[str, Any]) -> str:
    """The field the cell body fills: ``text`` for speech models, ``prompt`` otherwise."""
    params = entry.get("parameters") or {}
    if entry.get("audio_kind") == "speech" or ("text" in params and "prompt" not in params):
        return "text"
    return "prompt"


def choose_model(
    kind: str, models: Sequence[Mapping[str, Any]], requested: str | None, default: str | None
) -> Mapping[str, Any]:
    """The catalog entry for ``--model`` (or the default model of ``kind``)."""
    of_kind = [m for m in models if m.get("type") == kind]
    ids = ", ".join(str(m.get("id")) for m in of_kind) or "(none)"
    wanted = requested or default
    if wanted is None:
        if not of_kind:
            raise MagicUsageError(f"the catalog has no {kind} model")
        return of_kind[0]
    for model in models:
        if model.get("id") == wanted:
            if model.get("type") != kind:
                raise MagicUsageError(
                    f"{wanted} is a {model.get('type')} model, not {kind}; {kind} models: {ids}"
                )
            return model
    hint = did_you_mean(wanted, [str(m.get("id")) for m in of_kind])
    raise MagicUsageError(f"unknown model {wanted!r}{hint}; {kind} models: {ids}")


def _effective_tier(request: Mapping[str, Any], mode: Mapping[str, Any]) -> Any:
    defaults = mode.get("defaults") or {}
    for name in ("tier", "resolution"):
        if request.get(name) is not None:
            return request[name]
        if defaults.get(name) is not None:
            return defaults[name]
    return None


def allowed_values(mode: Mapping[str, Any], name: str, tier: Any) -> list[Any] | None:
    """The values ``name`` may take in ``mode`` (at ``tier``), or None when not restricted."""
    allowed = (mode.get("allowed") or {}).get(name)
    if allowed is None:
        return None
    if isinstance(allowed, Mapping) and "by_tier" in allowed:
        by_tier = allowed["by_tier"]
        if tier is not None and str(tier) in by_tier:
            return list(by_tier[str(tier)])
        merged: list[Any] = []
        for values in by_tier.values():
            merged.extend(v for v in values if v not in merged)
        return merged
    return list(allowed)


# -- the whole request ------------------------------------------------------------------------


def _pick_mode(
    entry: Mapping[str, Any], given: set[str], requested: str | None
) -> Mapping[str, Any]:
    modes = modes_of(entry)
    ids = [str(m.get("id")) for m in modes]
    if requested is not None:
        for mode in modes:
            if mode.get("id") == requested:
                return mode
        raise MagicUsageError(
            f"--mode: {entry.get('id')} has no mode {requested!r}; modes: {', '.join(ids)}"
        )
    if len(modes) == 1:
        return modes[0]
    # Among the modes that accept every given field: the most specific one whose required
    # inputs are all given; failing that, the one missing fewest (build_request names them).
    accepting = [m for m in modes if given <= set(accepted_fields(m))]
    if not accepting:
        raise MagicUsageError(
            f"{entry.get('id')} has no mode that accepts all of "
            f"{', '.join(sorted(given))}; choose one with --mode: "
            + "; ".join(f"{m.get('id')} (needs {', '.join(m.get('required', []))})" for m in modes)
        )

    def fit(mode: Mapping[str, Any]) -> tuple[int, int]:
        required = set(mode.get("required", []))
        return (-len(required - given), len(required & given))

    best = max(fit(m) for m in accepting)
    return next(m for m in accepting if fit(m) == best)


def build_request(
    entry: Mapping[str, Any],
    options: CellOptions,
    body: str,
    *,
    resolve_asset: AssetResolver | None = None,
    lookup: VariableLookup | None = None,
) -> dict[str, Any]:
    """The request body for ``entry`` from the magic's options and the cell body.

    Checks every field against the catalog entry (known field, accepted by the mode, allowed
    value, bounds, required inputs) and raises ``MagicUsageError`` naming what is allowed.
    """
    model_id = str(entry.get("id"))
    params: Mapping[str, Mapping[str, Any]] = entry.get("parameters") or {}
    text_field = prompt_field(entry)
    _check_known(options.fields, params, model_id, text_field)
    given = set(options.fields)
    text = body.strip()
    if text:
        given.add(text_field)
    mode = _pick_mode(entry, given, options.mode)
    mode_id = str(mode.get("id"))
    where = f"{model_id} ({mode_id})" if entry.get("mode_required") else model_id
    _check_accepted(options.fields, accepted_fields(mode), where, text_field)
    request: dict[str, Any] = {"model": model_id}
    if entry.get("mode_required") or mode_id != "default":
        request["mode"] = mode_id
    if text:
        request[text_field] = text
    voices = entry.get("voices") or ()
    for name, raw in options.fields.items():
        request[name] = convert_value(
            name, raw, params[name], resolve_asset=resolve_asset, lookup=lookup, voices=voices
        )
    _check_allowed(request, mode, where)
    missing = [n for n in mode.get("required", []) if request.get(n) in (None, "", [])]
    if missing:
        hint = " (the cell body)" if text_field in missing else ""
        raise MagicUsageError(f"{where} needs {', '.join(missing)}{hint}")
    _check_rules(entry, request)
    return request


def _check_known(
    fields: Mapping[str, Any], params: Mapping[str, Any], model_id: str, text_field: str
) -> None:
    for name in fields:
        if name not in params or name in ("model", "mode"):
            names = [n for n in params if n not in ("model", "mode", text_field)]
            known = ", ".join(f"--{n}" for n in names)
            hint = did_you_mean(name, names, prefix="--")
            raise MagicUsageError(
                f"--{name} is not a field of {model_id}{hint}; its fields are: {known}"
                f"\n\n{CELL_USAGE}"
            )


def _check_accepted(
    fields: Mapping[str, Any], accepted: Sequence[str], where: str, text_field: str
) -> None:
    for name in fields:
        if name not in accepted:
            others = [n for n in accepted if n not in ALWAYS_ACCEPTED and n != text_field]
            raise MagicUsageError(
                f"--{name} is not accepted by {where}; its fields are: "
                + (", ".join(f"--{n}" for n in others) or "(none)")
            )


def _check_allowed(request: Mapping[str, Any], mode: Mapping[str, Any], where: str) -> None:
    tier = _effective_tier(request, mode)
    ranges = mode.get("ranges") or {}
    for name, value in request.items():
        allowed = allowed_values(mode, name, tier)
        if allowed is not None and value not in allowed and str(value) not in map(str, allowed):
            at = (
                f" at tier {tier}"
                if isinstance((mode.get("allowed") or {}).get(name), Mapping)
                else ""
            )
            hint = did_you_mean(str(value), [str(a) for a in allowed])
            raise MagicUsageError(
                f"--{name}: {value!r} is not allowed for {where}{at}{hint}; allowed values: "
                f"{show_values(allowed)}"
            )
        bounds = ranges.get(name)
        if bounds and isinstance(value, (int, float)) and not isinstance(value, bool):
            check_bounds(name, value, bounds)
    counts = mode.get("max_counts") or {}
    for name, limit in counts.items():
        value = request.get(name)
        if isinstance(value, list) and len(value) > limit:
            raise MagicUsageError(f"--{name} takes at most {limit} for {where}")


def _check_rules(entry: Mapping[str, Any], request: Mapping[str, Any]) -> None:
    for rule in entry.get("rules") or ():
        fields = rule.get("fields") or []
        present = [f for f in fields if request.get(f) not in (None, "", [])]
        if rule.get("kind") == "mutually_exclusive" and len(present) > 1:
            raise MagicUsageError(f"give only one of: {', '.join(fields)}")
        if rule.get("kind") == "one_of_required" and not present:
            raise MagicUsageError(f"{entry.get('id')} needs one of: {', '.join(fields)}")

"""The request a ``%%mediagen`` cell sends, built from the line and judged by the catalog.

Pure functions over catalog entries as plain dicts (the shape of ``docs/wire-contract.md``): no
client, no IPython. The mode is chosen from the fields given and every field is typed by its
schema (``_values``); the typed request is then judged by ``mediagen.pricing.catalog`` (the
engine of ``Catalog.validate``) before anything is sent, and a refusal is a ``MagicUsageError``
naming what is allowed (``_verdicts``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mediagen.magics._cell_line import CELL_USAGE, CellOptions, MagicUsageError, did_you_mean
from mediagen.magics._values import AssetResolver, VariableLookup, convert_value
from mediagen.magics._verdicts import refuse_if_invalid
from mediagen.pricing.catalog import DEFAULT_MODE, Catalog


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


# -- the whole request ------------------------------------------------------------------------


def _pick_mode(entry: Mapping[str, Any], given: set[str], requested: str | None) -> str:
    """The mode the cell runs in: ``--mode``, the only one, or the one the given fields fit."""
    catalog = Catalog(entry)
    ids = catalog.mode_ids or [DEFAULT_MODE]
    if requested is not None:
        if requested in ids:
            return requested
        raise MagicUsageError(
            f"--mode: {catalog.id} has no mode {requested!r}; modes: {', '.join(ids)}"
        )
    if len(ids) == 1:
        return ids[0]
    # Among the modes that accept every given field: the most specific one whose required
    # inputs are all given; failing that, the one missing fewest (the catalog names them).
    modes = catalog.modes
    accepting = [m for m in modes if given <= set(catalog.accepted(m["id"]))]
    if not accepting:
        raise MagicUsageError(
            f"{catalog.id} has no mode that accepts all of "
            f"{', '.join(sorted(given))}; choose one with --mode: "
            + "; ".join(f"{m.get('id')} (needs {', '.join(m.get('required', []))})" for m in modes)
        )

    def fit(mode: Mapping[str, Any]) -> tuple[int, int]:
        required = set(mode.get("required", []))
        return (-len(required - given), len(required & given))

    return str(max(accepting, key=fit)["id"])


def build_request(
    entry: Mapping[str, Any], options: CellOptions, body: str, **sources: Any
) -> dict[str, Any]:
    """The request body for ``entry`` from the magic's options and the cell body
    (``typed_request``; ``sources``: its ``resolve_asset`` and ``lookup``), judged.

    Every verdict on the typed request (accepted by the mode, allowed values per tier, ranges,
    steps, counts, lengths, required inputs, rules) is the catalog's, worded by ``_verdicts``:
    a refused request raises ``MagicUsageError`` naming what is allowed.
    """
    request = typed_request(entry, options, body, **sources)
    refuse_if_invalid(entry, request, options.kind, prompt_field(entry))
    return request


def typed_request(
    entry: Mapping[str, Any],
    options: CellOptions,
    body: str,
    *,
    resolve_asset: AssetResolver | None = None,
    lookup: VariableLookup | None = None,
) -> dict[str, Any]:
    """The request the line and body describe, not yet judged: the mode chosen from the fields
    given, each flag (a field of the model) typed by its schema."""
    params: Mapping[str, Mapping[str, Any]] = entry.get("parameters") or {}
    text_field = prompt_field(entry)
    _check_known(options.fields, params, str(entry.get("id")), text_field)
    given = set(options.fields)
    text = body.strip()
    if text:
        given.add(text_field)
    mode_id = _pick_mode(entry, given, options.mode)
    request: dict[str, Any] = {"model": str(entry.get("id"))}
    if entry.get("mode_required") or mode_id != DEFAULT_MODE:
        request["mode"] = mode_id
    if text:
        request[text_field] = text
    for name, raw in options.fields.items():
        request[name] = convert_value(
            name, raw, params[name], resolve_asset=resolve_asset, lookup=lookup
        )
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

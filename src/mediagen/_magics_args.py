"""Arguments of the ``%%mediagen`` cell magic, checked against the model's catalog entry.

Pure functions over catalog entries as plain dicts (the shape of ``docs/wire-contract.md``): no
client, no IPython. Every mistake a user can make on the magic line becomes a
``MagicUsageError`` whose message names the option and the values that are allowed, so the magic
can show a usage message instead of a traceback, and nothing is sent to the service.

The line is ``KIND [--model M] [--mode MODE] [--FIELD VALUE ...] [-o NAME] [--yes] [--no-wait]``.
``--FIELD`` is any request field the model's catalog entry lists (``--generate-audio`` and
``--generate_audio`` are the same flag; a boolean flag alone means true).
"""

from __future__ import annotations

import difflib
import json
import keyword
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mediagen.catalog import ALWAYS_ACCEPTED, JSON_TYPES

KINDS = ("image", "video", "audio")
#: Options of the magic itself (not request fields).
MAGIC_OPTIONS = ("model", "mode", "o", "output", "yes", "no_wait", "help")
#: Parameter types whose value is an asset id (or something a resolver turns into one).
ASSET_TYPES = ("asset",)
ASSET_LIST_TYPES = ("asset_list",)
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")

CELL_USAGE = (
    "%%mediagen image|video|audio [--model MODEL] [--mode MODE] [--FIELD VALUE ...] "
    "[-o NAME] [--yes] [--no-wait]\n"
    "The cell body is the prompt (the text to speak, for a speech model).\n"
    "FIELD is any request field of the model (see `%mediagen models KIND`); a boolean flag alone "
    "means true; reference fields take an asset id, an uploaded file path, or the name of a "
    "variable holding a generation or an output."
)


class MagicUsageError(ValueError):
    """A mistake on the magic line; the message says what is allowed."""


@dataclass
class CellOptions:
    """The magic line, split into the magic's own options and raw request fields."""

    kind: str
    model: str | None = None
    mode: str | None = None
    output_name: str | None = None
    yes: bool = False
    wait: bool = True
    #: flag name (underscored) -> raw text, or True for a bare flag
    fields: dict[str, str | bool] = field(default_factory=dict)


def did_you_mean(word: str, known: Iterable[str], prefix: str = "") -> str:
    """``"; did you mean --quality?"`` for a near miss, else ``""`` (as the client says it)."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f"; did you mean {prefix}{close[0]}?" if close else ""


def _flag_name(token: str) -> str:
    return token.lstrip("-").replace("-", "_")


def parse_cell_line(line: str) -> CellOptions:
    """Split the magic line. Raises ``MagicUsageError`` for a malformed line."""
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise MagicUsageError(f"cannot parse the magic line ({exc})\n\n{CELL_USAGE}") from None
    if not tokens or tokens[0] in ("-h", "--help"):
        raise MagicUsageError(CELL_USAGE)
    kind = tokens[0]
    if kind not in KINDS:
        raise MagicUsageError(
            f"the first word must be the media kind, one of: {', '.join(KINDS)} "
            f"(got {kind!r}{did_you_mean(kind, KINDS)})\n\n{CELL_USAGE}"
        )
    options = CellOptions(kind=kind)
    i = 1
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("-") or token in ("-", "--"):
            raise MagicUsageError(
                f"unexpected word {token!r}: options start with --\n\n{CELL_USAGE}"
            )
        value: str | None = None
        if "=" in token and token.startswith("--"):
            token, value = token.split("=", 1)
        name = _flag_name(token)
        if value is None and i + 1 < len(tokens) and not _looks_like_flag(tokens[i + 1]):
            value = tokens[i + 1]
            i += 1
        i += 1
        if name in ("yes", "y"):
            options.yes = _bool_option(name, value)
        elif name == "no_wait":
            options.wait = not _bool_option(name, value)
        elif name in ("h", "help"):
            raise MagicUsageError(CELL_USAGE)
        elif name in ("model", "m", "mode", "o", "output", "name"):
            if value is None:
                raise MagicUsageError(f"--{name} needs a value\n\n{CELL_USAGE}")
            if name in ("model", "m"):
                options.model = value
            elif name == "mode":
                options.mode = value
            else:
                options.output_name = check_identifier(value)
        else:
            if name in options.fields:
                raise MagicUsageError(f"--{name} is given twice")
            options.fields[name] = True if value is None else value
    return options


def _looks_like_flag(word: str) -> bool:
    """``--x`` and ``-o`` are flags; ``-3`` and ``-0.5`` are (negative) values."""
    if not word.startswith("-") or len(word) == 1:
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def _bool_option(name: str, value: str | None) -> bool:
    if value is None:
        return True
    return parse_bool(name, value)


def check_identifier(name: str) -> str:
    """``-o NAME`` must be a Python variable name."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise MagicUsageError(f"-o needs a Python variable name, not {name!r}")
    return name


def parse_bool(name: str, text: str | bool) -> bool:
    if isinstance(text, bool):
        return text
    lowered = text.strip().lower()
    if lowered in TRUE_WORDS:
        return True
    if lowered in FALSE_WORDS:
        return False
    raise MagicUsageError(f"--{name} is a yes/no option: use true or false (got {text!r})")


# -- catalog helpers --------------------------------------------------------------------------


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


def _show(values: Sequence[Any]) -> str:
    return ", ".join(json.dumps(v) if not isinstance(v, str) else v for v in values)


# -- conversion of one flag -------------------------------------------------------------------

#: resolve(field, text or object, media) -> asset id; supplied by the magic (namespace, uploads).
AssetResolver = Callable[[str, Any, Any], str]
#: lookup(raw text) -> (found, value): a variable of the user namespace, for JSON-typed fields.
VariableLookup = Callable[[str], tuple[bool, Any]]


def convert_value(
    name: str,
    raw: str | bool,
    schema: Mapping[str, Any],
    *,
    resolve_asset: AssetResolver | None = None,
    lookup: VariableLookup | None = None,
    voices: Sequence[Mapping[str, Any]] = (),
) -> Any:
    """The typed request value of ``--name raw`` according to the parameter's schema."""
    kind = schema.get("type", "string")
    if kind == "boolean":
        return parse_bool(name, raw)
    if raw is True:
        raise MagicUsageError(f"--{name} needs a value ({_describe(schema)})")
    text = str(raw)
    if kind == "integer":
        try:
            value: Any = int(text)
        except ValueError:
            raise MagicUsageError(f"--{name} needs a whole number (got {text!r})") from None
        return _check_bounds(name, value, schema)
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise MagicUsageError(f"--{name} needs a number (got {text!r})") from None
        value = int(number) if number.is_integer() and "." not in text else number
        return _check_bounds(name, value, schema)
    if kind in ASSET_TYPES:
        return resolve_asset(name, text, schema.get("media")) if resolve_asset else text
    if kind in ASSET_LIST_TYPES:
        items: list[Any] = [p.strip() for p in text.split(",") if p.strip()]
        if lookup is not None:
            found, value = lookup(text)
            if found and isinstance(value, (list, tuple)):
                items = list(value)
        if resolve_asset is None:
            return items
        return [resolve_asset(name, item, schema.get("media")) for item in items]
    if kind == "string_list":
        if lookup is not None:
            found, value = lookup(text)
            if found and isinstance(value, (list, tuple)):
                return [str(v) for v in value]
        return [p.strip() for p in text.split(",") if p.strip()]
    if kind in JSON_TYPES:
        if lookup is not None:
            found, value = lookup(text)
            if found:
                return value
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise MagicUsageError(
                f"--{name} takes JSON (for example {_json_example(kind)}) or the name of a "
                f"variable holding the value (got {text!r})"
            ) from None
    if kind == "voice" and voices:
        known = [str(v.get("name")) for v in voices] + [str(v.get("id")) for v in voices]
        if text not in known:
            names = ", ".join(str(v.get("name")) for v in voices)
            raise MagicUsageError(f"--{name}: unknown voice {text!r}; voices: {names}")
        return text
    enum = schema.get("enum")
    if enum is not None and text not in [str(e) for e in enum]:
        hint = did_you_mean(text, [str(e) for e in enum])
        raise MagicUsageError(
            f"--{name}: {text!r} is not allowed{hint}; allowed values: {_show(enum)}"
        )
    max_length = schema.get("max_length")
    if max_length is not None and len(text) > max_length:
        raise MagicUsageError(f"--{name} is at most {max_length} characters")
    return text


def _json_example(kind: str) -> str:
    return {
        "keyframes": '\'[{"image": "asset_...", "frame_index": 0}]\'',
        "segments": '\'[{"voice_name": "Aria", "text": "Hello"}]\'',
        "multi_prompt": '\'[{"prompt": "a cat", "duration": 5}]\'',
        "composition_plan": '\'{"sections": [{"name": "intro", "duration_seconds": 10}]}\'',
        "elements": '\'[{"name": "hero", "images": ["asset_..."]}]\'',
        "reference_names": '\'{"reference_images": ["hero"]}\'',
    }.get(kind, "'{}'")


def _describe(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type", "string")
    if schema.get("enum"):
        return f"one of: {_show(schema['enum'])}"
    bounds = [f">= {schema['minimum']}"] if "minimum" in schema else []
    bounds += [f"<= {schema['maximum']}"] if "maximum" in schema else []
    return f"{kind}{' ' + ', '.join(bounds) if bounds else ''}"


def _check_bounds(name: str, value: float, schema: Mapping[str, Any]) -> Any:
    low, high = schema.get("minimum"), schema.get("maximum")
    if (low is not None and value < low) or (high is not None and value > high):
        raise MagicUsageError(f"--{name} must be between {low} and {high} (got {value})")
    step = schema.get("multiple_of")
    if step and value % step:
        raise MagicUsageError(f"--{name} must be a multiple of {step} (got {value})")
    return value


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
    for name in options.fields:
        if name not in params or name in ("model", "mode"):
            names = [n for n in params if n not in ("model", "mode", text_field)]
            known = ", ".join(f"--{n}" for n in names)
            hint = did_you_mean(name, names, prefix="--")
            raise MagicUsageError(
                f"--{name} is not a field of {model_id}{hint}; its fields are: {known}"
                f"\n\n{CELL_USAGE}"
            )
    given = set(options.fields)
    text = body.strip()
    if text:
        given.add(text_field)
    mode = _pick_mode(entry, given, options.mode)
    mode_id = str(mode.get("id"))
    accepted = accepted_fields(mode)
    where = f"{model_id} ({mode_id})" if entry.get("mode_required") else model_id
    for name in options.fields:
        if name not in accepted:
            others = [n for n in accepted if n not in ALWAYS_ACCEPTED and n != text_field]
            raise MagicUsageError(
                f"--{name} is not accepted by {where}; its fields are: "
                + (", ".join(f"--{n}" for n in others) or "(none)")
            )
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
                f"{_show(allowed)}"
            )
        bounds = ranges.get(name)
        if bounds and isinstance(value, (int, float)) and not isinstance(value, bool):
            _check_bounds(name, value, bounds)
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

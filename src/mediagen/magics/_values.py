"""One ``--FIELD VALUE`` of the ``%%mediagen`` line, typed by the parameter's catalog schema.

A table maps each parameter type to its converter, so a new type in the catalog is one entry
here. Every converter raises ``MagicUsageError`` naming what the field takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mediagen.magics._cell_line import MagicUsageError, parse_bool
from mediagen.pricing.catalog import JSON_TYPES

#: resolve(field, text or object, media) -> asset id; supplied by the magic (namespace, uploads).
AssetResolver = Callable[[str, Any, Any], str]
#: lookup(raw text) -> (found, value): a variable of the user namespace, for JSON-typed fields.
VariableLookup = Callable[[str], tuple[bool, Any]]

#: An example value per JSON-typed parameter, shown when the text is not JSON.
_JSON_EXAMPLES = {
    "keyframes": '\'[{"image": "asset_...", "frame_index": 0}]\'',
    "segments": '\'[{"voice_name": "Aria", "text": "Hello"}]\'',
    "multi_prompt": '\'[{"prompt": "a cat", "duration": 5}]\'',
    "composition_plan": '\'{"sections": [{"name": "intro", "duration_seconds": 10}]}\'',
    "elements": '\'[{"name": "hero", "images": ["asset_..."]}]\'',
    "reference_names": '\'{"reference_images": ["hero"]}\'',
}


@dataclass(frozen=True)
class _Flag:
    """One flag being converted: its name, text, schema, and what the magic can look up."""

    name: str
    text: str
    schema: Mapping[str, Any]
    resolve_asset: AssetResolver | None
    lookup: VariableLookup | None

    def variable(self) -> tuple[bool, Any]:
        """The user's variable named by the text, when the magic can look one up."""
        return self.lookup(self.text) if self.lookup is not None else (False, None)

    def asset(self, value: Any) -> Any:
        if self.resolve_asset is None:
            return value
        return self.resolve_asset(self.name, value, self.schema.get("media"))


def show_values(values: Sequence[Any]) -> str:
    return ", ".join(json.dumps(v) if not isinstance(v, str) else v for v in values)


def _integer(flag: _Flag) -> Any:
    try:
        value = int(flag.text)
    except ValueError:
        raise MagicUsageError(f"--{flag.name} needs a whole number (got {flag.text!r})") from None
    return value


def _number(flag: _Flag) -> Any:
    try:
        number = float(flag.text)
    except ValueError:
        raise MagicUsageError(f"--{flag.name} needs a number (got {flag.text!r})") from None
    value = int(number) if number.is_integer() and "." not in flag.text else number
    return value


def _comma_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _asset(flag: _Flag) -> Any:
    return flag.asset(flag.text)


def _asset_list(flag: _Flag) -> Any:
    found, value = flag.variable()
    items = list(value) if found and isinstance(value, (list, tuple)) else _comma_list(flag.text)
    return [flag.asset(item) for item in items]


def _string_list(flag: _Flag) -> Any:
    found, value = flag.variable()
    if found and isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return _comma_list(flag.text)


def _json(flag: _Flag) -> Any:
    found, value = flag.variable()
    if found:
        return value
    try:
        return json.loads(flag.text)
    except json.JSONDecodeError:
        example = _JSON_EXAMPLES.get(str(flag.schema.get("type")), "'{}'")
        raise MagicUsageError(
            f"--{flag.name} takes JSON (for example {example}) or the name of a "
            f"variable holding the value (got {flag.text!r})"
        ) from None


def _text(flag: _Flag) -> Any:
    return flag.text


#: parameter type -> converter of its text; any other type (a string, a voice) is the text.
_CONVERTERS: dict[str, Callable[[_Flag], Any]] = {
    "integer": _integer,
    "number": _number,
    "asset": _asset,
    "asset_list": _asset_list,
    "string_list": _string_list,
    **dict.fromkeys(JSON_TYPES, _json),
}


def _describe(schema: Mapping[str, Any]) -> str:
    if schema.get("enum"):
        return f"one of: {show_values(schema['enum'])}"
    bounds = [f">= {schema['minimum']}"] if "minimum" in schema else []
    bounds += [f"<= {schema['maximum']}"] if "maximum" in schema else []
    kind = schema.get("type", "string")
    return f"{kind}{' ' + ', '.join(bounds) if bounds else ''}"


def convert_value(
    name: str,
    raw: str | bool,
    schema: Mapping[str, Any],
    *,
    resolve_asset: AssetResolver | None = None,
    lookup: VariableLookup | None = None,
) -> Any:
    """The typed request value of ``--name raw`` according to the parameter's schema."""
    kind = schema.get("type", "string")
    if kind == "boolean":
        return parse_bool(name, raw)
    if raw is True:
        raise MagicUsageError(f"--{name} needs a value ({_describe(schema)})")
    flag = _Flag(name, str(raw), schema, resolve_asset, lookup)
    return _CONVERTERS.get(kind, _text)(flag)

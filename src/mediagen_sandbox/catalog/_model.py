"""How a model is declared: its public catalog entry (prices and every value they derive from
stated as data) plus the few hooks validation and rendering call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..media.spec import OutputSpec
from ._params import BY_KIND
from ._pricing import billable_seconds, price_summary
from ._types import AssetRef, Lookup, SourceGeneration

# Example requests name their inputs with placeholders a caller swaps for real ids:
# "asset_example_<media>" (or "asset_example_<media>_<n>" for several) for an uploaded asset of
# that media kind, "generation_example_video" for a completed video generation of the caller.
ASSET_PLACEHOLDER_PREFIX = "asset_example_"
GENERATION_PLACEHOLDER = "generation_example_video"


@dataclass
class Ctx:
    """One request being validated."""

    model: ModelDef
    mode: dict
    given: dict  # the fields the caller set (minus model, mode, idempotency_key)
    values: dict  # the mode's defaults, then the given fields, then derived values
    lookup: Lookup | None
    assets: dict[str, Any] = field(default_factory=dict)  # field -> AssetRef | list[AssetRef]
    keyframes: list[tuple[int, AssetRef]] = field(default_factory=list)
    source: SourceGeneration | None = None  # source_generation_id
    previous: SourceGeneration | None = None  # previous_interaction_id
    errors: list[dict] = field(default_factory=list)
    # a GenerationError the job will end with (code, message): inputs valid in shape that the
    # "provider" turns down, e.g. an unknown cloned-voice embedding
    planned_failure: tuple[str, str] | None = None

    @property
    def entry(self) -> dict:
        return self.model.entry

    def asset(self, name: str) -> AssetRef | None:
        value = self.assets.get(name)
        return value if isinstance(value, AssetRef) else None

    def path(self, name: str) -> str | None:
        ref = self.asset(name)
        return ref.path if ref is not None else None

    def asset_seconds(self, name: str) -> float | None:
        ref = self.asset(name)
        return ref.duration_seconds if ref is not None else None

    def seconds(self) -> float | None:
        """The billable seconds the mode's price states for this request."""
        return billable_seconds(self.mode["price"], self.values, self.asset_seconds)


@dataclass
class ModelDef:
    entry: dict
    outputs: Callable[[Ctx], list[OutputSpec]]
    check: Callable[[Ctx], None] | None = None  # model-specific rules: append to ctx.errors
    result_meta: Callable[[Ctx], dict | None] | None = None


def mode(
    id: str,
    name: str,
    required: list[str],
    optional: list[str],
    *,
    price: dict,
    example: dict,
    allowed: dict | None = None,
    defaults: dict | None = None,
    max_counts: dict | None = None,
    ranges: dict | None = None,
) -> dict:
    return {
        "id": id,
        "name": name,
        "required": list(required),
        "optional": list(optional),
        "allowed": dict(allowed or {}),
        "defaults": dict(defaults or {}),
        "max_counts": dict(max_counts or {}),
        "ranges": dict(ranges or {}),
        "price": price,
        "example_request": example,
    }


def _allowed_union(modes: list[dict], name: str) -> list:
    out: list = []
    for m in modes:
        allowed = m["allowed"].get(name)
        if isinstance(allowed, dict):
            groups = list(allowed.get("by_tier", {}).values())
        elif allowed is not None:
            groups = [allowed]
        else:
            continue
        for values in groups:
            out.extend(v for v in values if v not in out)
    return out


def build_entry(
    *,
    id: str,
    type: str,
    name: str,
    description: str,
    family: str,
    modes: list[dict],
    audio_kind: str | None = None,
    plans: list[str] | None = None,
    tiers: list[dict] | None = None,
    rules: list[dict] | None = None,
    voices: list[dict] | None = None,
) -> dict:
    schemas = BY_KIND[type]
    fields: list[str] = []
    for m in modes:
        for f in m["required"] + m["optional"]:
            if f not in fields:
                fields.append(f)
    fields.append("project_id")
    parameters: dict[str, dict] = {}
    for f in fields:
        schema = dict(schemas[f])
        union = _allowed_union(modes, f)
        if union and schema["type"] == "string" and "enum" not in schema:
            schema["enum"] = union
        parameters[f] = schema
    entry = {
        "id": id,
        "object": "model",
        "type": type,
        "audio_kind": audio_kind,
        "name": name,
        "description": description,
        "family": family,
        "plans": plans,
        "mode_required": len(modes) > 1,
        "parameters": parameters,
        "modes": modes,
        "tiers": tiers or [],
        "rules": rules or [],
    }
    if voices is not None:
        entry["voices"] = voices
    entry["price_summary"] = price_summary(modes)
    entry["example_request"] = {m["id"]: m["example_request"] for m in modes}
    return entry

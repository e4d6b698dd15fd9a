"""The catalog's seam types: what validation returns to the server and what it may ask it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from ..media.spec import OutputSpec


class ValidationFailed(Exception):
    """A request (or an estimate query) the model cannot take: 422 ``validation_error``.

    ``str(exc)`` is the message; ``details`` has one ``{"loc", "msg", "type"}`` per problem.
    """

    def __init__(self, message: str, details: list[dict]) -> None:
        super().__init__(message)
        self.details = details


def detail(field: str, msg: str, type_: str, where: str = "body") -> dict:
    return {"loc": [where, field], "msg": msg, "type": type_}


def fail(field: str, msg: str, type_: str, where: str = "body") -> ValidationFailed:
    return ValidationFailed(f"{field}: {msg}", [detail(field, msg, type_, where)])


def failed(details: list[dict], context: str) -> ValidationFailed:
    shown = "; ".join(f"{d['loc'][-1]}: {d['msg']}" for d in details[:5])
    more = f" (and {len(details) - 5} more)" if len(details) > 5 else ""
    return ValidationFailed(f"{context}: {shown}{more}", details)


@dataclass(frozen=True)
class AssetRef:
    asset_id: str
    media: str  # "image" | "video" | "audio"
    ready: bool
    path: str | None
    content_type: str | None
    width: int | None
    height: int | None
    duration_seconds: float | None


@dataclass(frozen=True)
class SourceGeneration:
    id: str
    type: str
    status: str
    model: str
    duration_seconds: float | None
    width: int | None
    height: int | None
    output_paths: list[str] = field(default_factory=list)


class Lookup(Protocol):
    """What validation may ask the server (scoped to the caller's organization)."""

    def asset(self, asset_id: str) -> AssetRef | None: ...

    def assets(self, asset_ids: Iterable[str]) -> dict[str, AssetRef]:
        """The ones of ``asset_ids`` that exist, at once (later ``asset`` calls reuse them)."""
        ...

    def generation(self, generation_id: str) -> SourceGeneration | None: ...

    def interaction(self, interaction_id: str) -> SourceGeneration | None:
        """The generation whose ``result_meta.interaction_id`` is this id, if any."""
        ...


@dataclass
class ValidatedRequest:
    kind: str
    model_id: str
    mode: str | None
    params: dict  # the request with the mode's defaults applied
    pricing: dict  # the mode's price object
    list_credits: float
    billable_duration_seconds: float | None
    outputs: list[OutputSpec]
    planned_failure: tuple[str, str] | None = None  # (GenerationError code, message)
    result_meta: dict | None = None


@dataclass
class Quote:
    model_id: str
    mode: str | None
    list_credits: float
    billable_duration_seconds: float | None

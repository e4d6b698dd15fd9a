"""The model line-up, in the order ``GET /v1/models`` lists it."""

from __future__ import annotations

import copy

from . import _audio, _image, _video
from ._model import ModelDef

_ALL: list[ModelDef] = [*_image.MODELS, *_video.MODELS, *_audio.MODELS]
_BY_ID: dict[str, ModelDef] = {md.entry["id"]: md for md in _ALL}


def model_def(model_id: str) -> ModelDef | None:
    return _BY_ID.get(model_id)


def models_of(kind: str | None) -> list[str]:
    return [md.entry["id"] for md in _ALL if kind is None or md.entry["type"] == kind]


def list_models(type: str | None = None) -> list[dict]:
    """Catalog entries (copies: callers may not change the catalog)."""
    return [copy.deepcopy(md.entry) for md in _ALL if type is None or md.entry["type"] == type]


def get_model(model_id: str) -> dict | None:
    md = _BY_ID.get(model_id)
    return copy.deepcopy(md.entry) if md is not None else None

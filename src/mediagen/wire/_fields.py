"""Reading the service's objects the one way, whether a client model or the JSON dict it came
from (the widgets, the magics and the history take either).

Below the client and the catalog, which both read entries this way: a typed model
(``Generation``, ``ModelInfo``...) answers with its attributes and gives its JSON back with
``to_dict()``; a dict answers with its keys. Nothing here guesses at other shapes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class ServiceModel(Protocol):
    """A client model: typed attributes over the JSON object the service sent."""

    def to_dict(self) -> dict[str, Any]: ...


def read_field(obj: ServiceModel | Mapping[str, Any] | None, name: str, default: Any = None) -> Any:
    """A field of a client model (its typed attribute) or of the JSON dict it came from
    (``None`` gives ``default``)."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def as_json(obj: ServiceModel | Mapping[str, Any]) -> dict[str, Any]:
    """A client model as the JSON object the service sent (unknown fields included), or a copy
    of a dict."""
    return dict(obj) if isinstance(obj, Mapping) else obj.to_dict()

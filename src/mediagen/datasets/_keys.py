"""The idempotency key of a table row: the same run, row and request give the same key.

The key is what makes a re-run free: the service answers a repeated key (with the same body)
with the generation it already made, and charges nothing again. So it must come out the same in
another process, on another machine, after a kernel restart: a SHA-256 of a canonical JSON of
the run id, the row label and the request (sorted keys, no spaces), within the service's limit
of 128 non-whitespace characters.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from mediagen.client._submit import new_idempotency_key


def _plain(value: Any) -> Any:
    """A JSON-ready form of a label or field value that is the same in every process (numpy
    and pandas scalars as Python ones, tuples as lists, timestamps as ISO text)."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", 0) == 0 and not isinstance(value, str):
        value = item()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return isoformat()
    tolist = getattr(value, "tolist", None)  # a numpy array
    if callable(tolist):
        return _plain(tolist())
    return repr(value)


def canonical(value: Any) -> str:
    """The one JSON text of ``value`` (sorted keys, no spaces) every process writes alike."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def row_key(run_id: str, label: Hashable, request: Mapping[str, Any]) -> str:
    """The idempotency key of row ``label`` of run ``run_id`` sending ``request``."""
    text = canonical({"run": str(run_id), "label": label, "request": dict(request)})
    return new_idempotency_key(derived_from=text)


def row_keys(
    run_id: str, labels: Iterable[Hashable], requests: Iterable[Mapping[str, Any]]
) -> list[str]:
    """``row_key`` of each row, labels and requests taken in step."""
    return [row_key(run_id, label, r) for label, r in zip(labels, requests, strict=True)]

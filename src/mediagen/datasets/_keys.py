"""The idempotency key of a table row: the same run, row and request give the same key.

The key is what makes a re-run free: the service answers a repeated key (with the same body)
with the generation it already made, and charges nothing again. So it must come out the same in
another process, on another machine, after a kernel restart: a SHA-256 of a canonical JSON of
the run id, the row label and the request (sorted keys, no spaces), within the service's limit
of 128 non-whitespace characters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping
from typing import Any

#: every row key starts with this, so a key in the service's history reads as a table row's
PREFIX = "mgrow-"


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
    return PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()

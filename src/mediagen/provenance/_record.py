"""What a manifest says about a generation: read off the output and its generation.

The request is kept as the service echoes it in the generation (its prompt and inputs; uploaded
inputs by asset id), less what is not about the media (URLs are temporary and may carry signed
query strings) and what the record holds already; nothing of the client's settings is read,
so no key can reach it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mediagen._version import __version__

#: the label of mediagen's own assertion in a C2PA manifest (and the sidecar's key)
ASSERTION_LABEL = "org.mediagen.generation"

# what is not about the media, or is a field of the record already
_REQUEST_DROPPED = frozenset(
    {
        "outputs", "url", "upload_url", "status", "error", "id", "object", "created_at",
        "completed_at", "credits_charged", "result_meta", "model", "mode", "type",
    }
)  # fmt: skip
_CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _text(value: Any) -> str | None:
    if value is None:
        return None
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


def _request(raw: dict[str, Any]) -> dict[str, Any]:
    request = raw.get("request")
    if isinstance(request, dict):
        source = dict(request)
    else:
        source = {k: v for k, v in raw.items() if k not in _REQUEST_DROPPED}
    return {k: v for k, v in source.items() if k not in _REQUEST_DROPPED and "key" not in k}


def build_record(
    output: Any, path: Path, generation: Any = None, sent: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The facts of ``output`` (a ``GenerationOutput``) saved at ``path``: JSON-ready.
    ``sent``: the request as this process sent it and its estimate, when it did."""
    raw: dict[str, Any] = dict(getattr(generation, "raw", None) or {})
    request = _request(raw)
    estimate = None
    if sent is not None:
        request = {**request, **_request(dict(sent.get("request") or {}))}
        estimate = sent.get("estimate")
    return {
        "generation_id": getattr(output, "generation_id", None) or raw.get("id"),
        "asset_id": getattr(output, "asset_id", None),
        "model": getattr(generation, "model", None) or raw.get("model"),
        "mode": getattr(generation, "mode", None) or raw.get("mode"),
        "type": getattr(generation, "type", None) or raw.get("type"),
        "request": request,
        "estimate": estimate,
        "credits_charged": getattr(generation, "credits_charged", None),
        "created_at": _text(getattr(generation, "created_at", None)),
        "completed_at": _text(getattr(generation, "completed_at", None)),
        "content_type": getattr(output, "content_type", None),
        "output_sha256": file_sha256(path),
        "mediagen_version": __version__,
    }

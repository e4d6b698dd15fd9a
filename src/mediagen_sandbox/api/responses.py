"""Fast JSON responses: handlers build dicts and return them pre-serialized.

Returning a ``Response`` makes FastAPI skip ``response_model`` validation, which the route
decorators keep only to document the shapes in ``/openapi.json``.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Response

from ..asgi import TRACE_SCOPE_KEY


def json_bytes(data: Any) -> bytes:
    """The response body for ``data`` (for handlers that encode on a worker thread, in their
    organization's turn: a page of history is milliseconds of encoding)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return encoded_response(json_bytes(data), status, headers)


def encoded_response(
    body: bytes, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def error_response(
    scope: dict,
    status: int,
    code: str,
    message: str,
    details: list | None = None,
    headers: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> Response:
    """The spec's Error body; ``extra`` adds fields to the error object (the API is additive)."""
    trace_id = scope.get(TRACE_SCOPE_KEY)
    error = {"code": code, "message": message, "details": details, "trace_id": trace_id}
    body = {"error": {**error, **(extra or {})}}
    return json_response(body, status, headers)

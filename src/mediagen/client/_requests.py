"""Sans-I/O core: build requests and turn responses into data or exceptions (pure functions).

``Client`` and ``AsyncClient`` send what these functions build and hand back what they
received; nothing here touches the network, a clock or the file system.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from mediagen.client import _errors, _shapes
from mediagen.client._redact import redact, redact_bytes, redact_value
from mediagen.client._retry import parse_retry_after
from mediagen.wire import _names as _wire


@dataclass(frozen=True)
class RequestSpec:
    """One API request: ``path`` is relative to the base URL (always under ``/v1``)."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = True
    #: Reads a 2xx body in place of ``json.loads`` (a history page straight into columns).
    #: A ``ValueError`` from it for a body that is not JSON is an answer lost on the way.
    decode: Callable[[bytes], Any] | None = None
    #: Checks the decoded JSON of a 2xx (``_shapes``: the spec's required fields); raises
    #: UnexpectedResponseError naming this endpoint when they are not there.
    expect: Callable[[Any, str, str], Any] | None = None


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return value


def _query(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _query_value(v) for k, v in params.items() if v is not None}


def format_datetime(value: dt.datetime | str) -> str:
    """ISO 8601 with an explicit offset (naive datetimes are taken as UTC)."""
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    text = value.astimezone(dt.timezone.utc).isoformat()
    return text.replace("+00:00", "Z")


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string, not {value!r}")
    return quote(value, safe="")


# --- builders -----------------------------------------------------------------------------


def submit(
    kind: str,
    body: Mapping[str, Any],
    idempotency_key: str | None,
    extra_headers: Mapping[str, str] | None = None,
) -> RequestSpec:
    """``POST /v1/{videos,images,audio}``; the key goes in the header and the body alike."""
    if kind not in _wire.SUBMIT_PATHS:
        raise ValueError(f"kind must be one of {sorted(_wire.SUBMIT_PATHS)}, not {kind!r}")
    payload = dict(body)
    headers: dict[str, str] = {}
    if idempotency_key is not None:
        payload["idempotency_key"] = idempotency_key
        headers[_wire.IDEMPOTENCY_HEADER] = idempotency_key
    headers.update(extra_headers or {})
    return RequestSpec(
        "POST",
        _wire.SUBMIT_PATHS[kind],
        json=payload,
        headers=headers,
        idempotent=idempotency_key is not None,
        expect=_shapes.generation,
    )


def get_generation(generation_id: str) -> RequestSpec:
    return RequestSpec(
        "GET",
        _wire.GENERATION_PATH.format(generation_id=_segment(generation_id, "generation_id")),
        expect=_shapes.generation,
    )


def list_generations(
    *,
    limit: int | None = None,
    after: str | None = None,
    status: str | None = None,
    type: str | None = None,
    model: str | None = None,
    created_after: dt.datetime | str | None = None,
    decode: Callable[[bytes], Any] | None = None,
) -> RequestSpec:
    params = {
        _wire.LIST_LIMIT_PARAM: limit,
        _wire.LIST_CURSOR_PARAM: after,
        "status": status,
        "type": type,
        "model": model,
        "created_after": created_after,
    }
    return RequestSpec(
        "GET",
        _wire.GENERATIONS_PATH,
        params=_query(params),
        decode=decode,
        expect=None if decode is not None else _shapes.generation_page,
    )


def list_models(type: str | None = None) -> RequestSpec:
    return RequestSpec(
        "GET", _wire.MODELS_PATH, params=_query({"type": type}), expect=_shapes.model_page
    )


def get_model(model_id: str) -> RequestSpec:
    return RequestSpec(
        "GET",
        _wire.MODEL_PATH.format(model_id=_segment(model_id, "model id")),
        expect=_shapes.model,
    )


def estimate(model_id: str, query: Mapping[str, Any]) -> RequestSpec:
    return RequestSpec(
        "GET",
        _wire.ESTIMATE_PATH.format(model_id=_segment(model_id, "model id")),
        params=_query(query),
        expect=_shapes.estimate,
    )


def credits() -> RequestSpec:
    return RequestSpec("GET", _wire.CREDITS_PATH, expect=_shapes.credits)


def register_upload(filename: str, content_type: str, size_bytes: int) -> RequestSpec:
    body = {
        _wire.UPLOAD_FILENAME: filename,
        _wire.UPLOAD_CONTENT_TYPE: content_type,
        _wire.UPLOAD_SIZE: int(size_bytes),
    }
    return RequestSpec("POST", _wire.UPLOADS_PATH, json=body, expect=_shapes.upload_ticket)


# --- responses ----------------------------------------------------------------------------


def decode_json(content: bytes) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


def error_from_response(
    status: int,
    headers: Mapping[str, str],
    content: bytes,
    *,
    method: str | None = None,
    path: str | None = None,
    secrets: tuple[str, ...] = (),
) -> _errors.APIError:
    """The exception for an error response; both the spec's body and FastAPI's are read.

    Everything taken from the body is redacted first (``secrets`` and anything that looks like
    a credential): a server or proxy that echoes the request's headers must not put the key
    into a message, a repr or a traceback.

    Shapes: ``{"error": {code, message, details, trace_id}}`` (the spec's), ``{"detail":
    [{loc, msg, type}]}`` (the 422 of ``GET /v1/generations/{id}`` may carry it), ``{"detail":
    "text"}``, or a body that is not JSON at all.
    """
    content = redact_bytes(content, secrets)
    body = redact_value(decode_json(content), secrets)
    code, message, trace_id, details = _error_fields(body, status)
    if not message:
        text = content[:300].decode("utf-8", "replace").strip() if content else ""
        message = text or f"HTTP {status} with no error body"
    message = redact(str(message), secrets)
    trace_id = trace_id or _header(headers, _wire.TRACE_HEADER)
    cls = _errors.error_class(status, code)
    kwargs: dict[str, Any] = {
        "status": status,
        "code": code,
        "details": details,
        "trace_id": trace_id,
        "method": method,
        "path": path,
        "body": body,
    }
    if cls is _errors.RateLimitError:
        kwargs["retry_after"] = parse_retry_after(_header(headers, _wire.RETRY_AFTER_HEADER))
    found = cls(message, **kwargs)
    if isinstance(found, _errors.PaymentRequiredError):
        _add_credit_figures(found, body)
    return found


def _error_fields(body: Any, status: int) -> tuple[Any, Any, Any, list[dict[str, Any]]]:
    """``(code, message, trace_id, details)`` read from an error body of either shape (the
    spec's ``{"error": ...}`` or FastAPI's ``{"detail": ...}``); None where it says nothing."""
    code = message = trace_id = None
    details: list[dict[str, Any]] = []
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        error = body["error"]
        code = error.get("code")
        message = error.get("message")
        trace_id = error.get("trace_id")
        details = [dict(d) for d in error.get("details") or [] if isinstance(d, Mapping)]
    elif isinstance(body, Mapping) and "detail" in body:
        detail = body["detail"]
        if isinstance(detail, list):
            details = [dict(d) for d in detail if isinstance(d, Mapping)]
            message = "Request validation failed: " + "; ".join(
                _errors.format_detail(d) for d in details[:5]
            )
            code = "validation_error" if status == 422 else None
        else:
            message = str(detail)
    return code, message, trace_id, details


def _add_credit_figures(found: _errors.PaymentRequiredError, body: Any) -> None:
    """A 402 states its shortfall: the credits required and available, when the body says."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        found.required = _credits_figure(error.get(_wire.ERROR_REQUIRED_CREDITS))
        found.available = _credits_figure(error.get(_wire.ERROR_AVAILABLE_CREDITS))


def _credits_figure(value: Any) -> float | None:
    """A number of credits from an error body (None for anything else, such as a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        lower = name.lower()
        for key, found in headers.items():
            if key.lower() == lower:
                return found
    return value


def page_items(page: Mapping[str, Any]) -> list[Any]:
    items = page.get(_wire.LIST_ITEMS)
    return list(items) if isinstance(items, list) else []


def page_next_cursor(page: Mapping[str, Any]) -> str | None:
    cursor = page.get(_wire.LIST_NEXT_CURSOR)
    if not cursor or page.get(_wire.LIST_HAS_MORE) is False:
        return None
    return str(cursor)

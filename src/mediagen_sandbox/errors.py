"""The spec's Error body, and the exception that produces it.

Every non-2xx response of the sandbox (under `/v1`, and also `/admin` and `/files`) has the body
``{"error": {"code", "message", "details", "trace_id"}}``. Handlers raise :class:`APIError`; the
exception handlers in :mod:`mediagen_sandbox.api.handlers` render it with the request's trace id.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from . import limits


class ErrorDetail(BaseModel):
    loc: list[str | int] = Field(description="Where the offending value is: body, then the field.")
    msg: str
    type: str


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable machine-readable code.")
    message: str = Field(description="Human-readable; not meant for parsing.")
    details: list[ErrorDetail] | None = Field(
        default=None, description="Present only on 422: one entry per offending field."
    )
    trace_id: str | None = Field(default=None, description="Identifies the request, for support.")
    required_credits: float | None = Field(
        default=None, description="402 only: the credits the refused request needs."
    )
    available_credits: float | None = Field(
        default=None,
        description="402 only: the credits the key can spend now (balance or member cap).",
    )


class ErrorBody(BaseModel):
    """The spec's Error body."""

    error: ErrorInfo


class APIError(Exception):
    """An error response: status, spec code, message, optional 422 details, fields added to the
    error object (``extra``: the 402's credit figures) and extra headers."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.extra = extra or {}


def unauthenticated(message: str = "A valid API key is required.") -> APIError:
    return APIError(401, "unauthenticated", message, headers={"WWW-Authenticate": "Bearer"})


def forbidden(message: str) -> APIError:
    return APIError(403, "forbidden", message)


def not_found(message: str) -> APIError:
    return APIError(404, "not_found", message)


def conflict(message: str) -> APIError:
    return APIError(409, "conflict", message)


def payment_required(message: str, *, required: float, available: float) -> APIError:
    """A 402 whose error object also states the shortfall as numbers (docs/wire-contract.md):
    the message is for people and "not meant for parsing"."""
    figures = {"required_credits": required, "available_credits": available}
    return APIError(402, "payment_required", message, extra=figures)


def validation_error(
    message: str, details: list[dict[str, Any]], total: int | None = None
) -> APIError:
    """A 422; ``details`` keeps the first ``limits.ERROR_DETAILS`` problems of ``total``
    (default: all given), so a body with thousands of unknown keys does not produce a
    response of megabytes."""
    total = len(details) if total is None else total
    if total > limits.ERROR_DETAILS:
        message += f" (details list the first {limits.ERROR_DETAILS} of {total} problems)"
        details = details[: limits.ERROR_DETAILS]
    return APIError(422, "validation_error", message, details=details)


def body_too_large() -> APIError:
    return APIError(
        413,
        "client_error",
        f"The request body is larger than the limit of {limits.BODY_BYTES} bytes.",
        headers={"Connection": "close"},
    )


def field_error(loc: list[str | int], msg: str, type_: str = "value_error") -> APIError:
    """A 422 about one field."""
    return validation_error(
        f"{'.'.join(str(p) for p in loc[1:]) or loc[0]}: {msg}",
        [{"loc": loc, "msg": msg, "type": type_}],
    )


# OpenAPI `responses=` for routes: each status documented with the real Error body.
_DESCRIPTIONS = {
    401: "unauthenticated: API key missing, invalid, revoked or expired.",
    402: "payment_required: credits (or the member cap) do not cover the request.",
    403: "forbidden: not allowed for this key or organization.",
    404: "not_found: no such resource for this key.",
    405: "client_error: method not allowed.",
    409: "conflict: idempotency key reused with a different request body.",
    413: "client_error: the request body is larger than the sandbox accepts.",
    422: "validation_error: the request failed validation; `details` lists the fields.",
    429: "rate_limited: per-key rate limit exceeded; see the Retry-After header.",
    500: "internal_error: unexpected server error (no stack trace is ever returned).",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` mapping that declares the Error body for the given statuses."""
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        entry: dict[str, Any] = {"model": ErrorBody, "description": _DESCRIPTIONS[status]}
        if status == 429:
            entry["headers"] = {
                "Retry-After": {
                    "description": "Seconds to wait before retrying.",
                    "schema": {"type": "integer"},
                }
            }
        out[status] = entry
    return out

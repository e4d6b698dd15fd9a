"""Exception handlers: every error becomes the spec's Error body; no stack trace leaks."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import APIError, validation_error
from .responses import error_response

log = logging.getLogger("mediagen_sandbox")

_GENERIC = {
    400: "The request could not be read.",
    404: "No such resource.",
    405: "Method not allowed for this path.",
}


def validation_details(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pydantic/FastAPI errors as the spec's details: ``loc`` (list), ``msg``, ``type``."""
    out = []
    for err in errors:
        loc = [p if isinstance(p, int) else str(p) for p in err.get("loc", ())] or ["body"]
        out.append({"loc": loc, "msg": str(err.get("msg", "")), "type": str(err.get("type", ""))})
    return out


def summary(details: list[dict[str, Any]], total: int | None = None) -> str:
    """The first five problems in words; ``total``: how many there were (default: all given)."""
    total = len(details) if total is None else total
    parts = []
    for d in details[:5]:
        where = ".".join(str(p) for p in d["loc"])
        parts.append(f"{where}: {d['msg']}")
    more = f" (+{total - 5} more)" if total > 5 else ""
    return "Request validation failed: " + "; ".join(parts) + more


def install(app: FastAPI) -> None:
    @app.exception_handler(APIError)
    async def _api_error(request: Request, exc: APIError):
        return error_response(
            request.scope, exc.status, exc.code, exc.message, exc.details, exc.headers, exc.extra
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        error = validation_error(
            summary(details := validation_details(list(exc.errors()))), details
        )
        return error_response(request.scope, 422, error.code, error.message, error.details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        status = exc.status_code
        if status == 404:
            path = request.url.path
            return error_response(request.scope, 404, "not_found", f"No route for {path}.")
        if status == 400:
            details = [{"loc": ["body"], "msg": str(exc.detail), "type": "body_invalid"}]
            return error_response(
                request.scope,
                422,
                "validation_error",
                "The request body could not be read.",
                details,
            )
        message = exc.detail if isinstance(exc.detail, str) else _GENERIC.get(status, "Error.")
        return error_response(request.scope, status, "client_error", message, None, exc.headers)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.exception("internal error on %s %s", request.method, request.url.path)
        return error_response(
            request.scope,
            500,
            "internal_error",
            "The sandbox hit an internal error; quote the trace id when reporting it.",
        )

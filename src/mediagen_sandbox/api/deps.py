"""Request dependencies: the sandbox context, the API-key caller (with rate limit), admin."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader

from ..asgi import KEY_SCOPE_KEY, bearer_token
from ..context import SandboxContext
from ..db import accounts
from ..db.accounts import Caller
from ..errors import APIError, unauthenticated

_admin_header = APIKeyHeader(
    name="X-Admin-Token", auto_error=False, description="Sandbox admin token (never an API key)."
)

_KEY_MESSAGES = {
    accounts.KeyState.UNKNOWN: "The API key is not valid.",
    accounts.KeyState.REVOKED: "The API key has been revoked.",
    accounts.KeyState.EXPIRED: "The API key has expired.",
}


def get_ctx(request: Request) -> SandboxContext:
    return request.app.state.ctx


class PlannedInternalError(RuntimeError):
    """What ``error_next_requests`` raises: a server bug, as far as the caller can tell."""


def authenticate(request: Request) -> Caller:
    """The key's creator, after the per-key rate limit (polling counts too).

    Called directly by the `/v1` handlers rather than as a FastAPI dependency: dependency
    resolution was the largest cost of a `GET /v1/generations/{id}`. ``/openapi.json`` still
    declares the bearer scheme on every `/v1` operation (see :func:`bearer_openapi`).
    """
    ctx: SandboxContext = request.app.state.ctx
    if ctx.config.take("error_next_requests"):
        raise PlannedInternalError("a planned internal error (admin config error_next_requests)")
    found = request.scope.get(KEY_SCOPE_KEY)  # looked up at the door (mediagen_sandbox.asgi)
    if found is None:
        token = bearer_token(request.scope)
        if not token:
            raise unauthenticated(
                "Missing API key: send the header Authorization: Bearer <API_KEY>."
            )
        found = accounts.lookup_key(ctx.store, token)
    state, who = found
    if who is None:
        raise unauthenticated(_KEY_MESSAGES[state])
    cfg = ctx.config.current
    wait = ctx.limiter.take(who.key_id, cfg.rate_limit_per_second, cfg.rate_limit_burst)
    if wait:
        raise APIError(
            429,
            "rate_limited",
            f"Rate limit exceeded for this API key; retry in {wait} seconds.",
            headers={"Retry-After": str(wait)},
        )
    return who


async def admin(request: Request, token: str | None = Depends(_admin_header)) -> SandboxContext:
    ctx: SandboxContext = request.app.state.ctx
    if not token:
        raise unauthenticated("The admin API needs the X-Admin-Token header.")
    if not ctx.is_admin_token(token):
        raise unauthenticated("The admin token is not valid.")
    return ctx


BEARER_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": "Organization API key: `Authorization: Bearer <API_KEY>`.",
}


def bearer_openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """Declare the bearer scheme and require it on every `/v1` operation."""
    schema.setdefault("components", {}).setdefault("securitySchemes", {})["APIKey"] = BEARER_SCHEME
    for path, operations in schema.get("paths", {}).items():
        if path.startswith("/v1/"):
            for operation in operations.values():
                operation["security"] = [{"APIKey": []}]
    return schema

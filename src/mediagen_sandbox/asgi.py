"""The outermost ASGI layer: trace ids, the API-key fence outside `/v1`, and dropped connections.

It is a pure ASGI wrapper placed *outside* Starlette's own middleware stack (see
:class:`mediagen_sandbox.app.SandboxApp`), so that

- every response, 500s included, carries ``X-Trace-Id`` (the same id handlers put in the Error
  body; they read it from ``scope["mediagen.trace_id"]``);
- an API key sent to anything outside `/v1` (except the signed `/files/...` URLs, which ignore
  credentials) is refused with 403 ``forbidden`` before any route runs;
- a request body (JSON, everywhere but the signed upload URLs, which stream to disk against the
  registered size) is capped at ``limits.BODY_BYTES``: a declared ``Content-Length`` above it
  is answered 413 before anything is read, and a chunked body is cut off with 413 when it
  passes the cap;
- a `/v1` request with a valid API key waits for its organization's turn at the door
  (:mod:`mediagen_sandbox.fairness`) before its body is read; the key's lookup is kept in
  ``scope["mediagen.key"]`` for the handler's authentication;
- a handler can ask for the connection to be dropped before the response is sent (the
  ``[[drop]]`` fault): it sets ``scope["mediagen.drop"].requested = True`` and this layer aborts
  the transport instead of sending the response start.

A decorator middleware (``@app.middleware("http")``) would cost ~2.5x throughput here.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from typing import Any

from . import limits
from .db.accounts import Caller, KeyState
from .errors import body_too_large
from .fairness import Door

log = logging.getLogger("mediagen_sandbox")

TRACE_SCOPE_KEY = "mediagen.trace_id"
DROP_SCOPE_KEY = "mediagen.drop"
KEY_SCOPE_KEY = "mediagen.key"  # (key state, caller or None) of the request's bearer key


def new_trace_id() -> str:
    return "trace_" + os.urandom(8).hex()


class DropSignal:
    """Set ``requested`` to make the outer layer abort the connection instead of answering."""

    __slots__ = ("requested",)

    def __init__(self) -> None:
        self.requested = False


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def error_payload(status: int, code: str, message: str, trace_id: str) -> bytes:
    body = {"error": {"code": code, "message": message, "details": None, "trace_id": trace_id}}
    return json.dumps(body).encode()


class OuterLayer:
    """Wraps the Starlette middleware stack; see the module docstring."""

    def __init__(
        self,
        app: Callable,
        lookup_key: Callable[[str], tuple[str, Caller | None]],
        is_admin_token: Callable[[str], bool],
        admission: Door,
    ) -> None:
        self.app = app
        self.lookup_key = lookup_key
        self.is_admin_token = is_admin_token
        self.admission = admission

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        trace_id = new_trace_id()
        scope[TRACE_SCOPE_KEY] = trace_id
        drop = DropSignal()
        scope[DROP_SCOPE_KEY] = drop
        trace_header = (b"x-trace-id", trace_id.encode())

        if self._key_outside_v1(scope):
            message = "API keys can only call the /v1 API; this path is outside /v1."
            await _send_error(send, 403, "forbidden", message, trace_header)
            return
        if _body_capped(scope):
            length = _header(scope, b"content-length")
            if length is not None and (not length.isdigit() or int(length) > limits.BODY_BYTES):
                too_large = body_too_large()
                await _send_error(
                    send, 413, too_large.code, too_large.message, trace_header, close=True
                )
                return
            receive = _capped_receive(receive)

        org_id = self._org_in_turn(scope)
        if org_id is None:
            await self._serve(scope, receive, send, drop, trace_header)
            return
        async with self.admission.turn(org_id):
            await self._serve(scope, receive, send, drop, trace_header)

    async def _serve(
        self,
        scope: dict[str, Any],
        receive: Callable,
        send: Callable,
        drop: DropSignal,
        trace_header: tuple[bytes, bytes],
    ) -> None:
        dropped = False
        started = complete = False

        async def send_wrapper(message: dict[str, Any]) -> None:
            nonlocal dropped, started, complete
            if dropped:
                return
            if message["type"] == "http.response.start":
                if drop.requested:
                    dropped = True
                    _abort_connection(send)
                    return
                started = True
                message["headers"] = [*message.get("headers", ()), trace_header]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        except Exception:
            # Starlette re-raises after its 500 handler has answered (and logged); passed on,
            # uvicorn would close a keep-alive connection whose exchange ended cleanly, and
            # the client's next request on it would be reset.
            if complete or dropped:
                return
            if started:
                raise  # a half-sent response: only closing the connection ends it
            log.exception("internal error before any handler answered")
            message = "The sandbox hit an internal error; quote the trace id when reporting it."
            await _send_error(send, 500, "internal_error", message, trace_header)

    def _key_outside_v1(self, scope: dict[str, Any]) -> bool:
        path: str = scope.get("path", "")
        if path == "/v1" or path.startswith(("/v1/", "/files/")):
            return False
        token = bearer_token(scope)
        if not token:
            return False
        if path.startswith("/admin"):
            admin_token = _header(scope, b"x-admin-token")
            if admin_token and self.is_admin_token(admin_token):
                return False
        return self.lookup_key(token)[0] == KeyState.VALID

    def _org_in_turn(self, scope: dict[str, Any]) -> str | None:
        """The organization of a `/v1` request's valid key (its lookup kept in the scope)."""
        if not scope.get("path", "").startswith("/v1/"):
            return None
        token = bearer_token(scope)
        if not token:
            return None
        found = scope[KEY_SCOPE_KEY] = self.lookup_key(token)
        return found[1].org_id if found[1] is not None else None


def bearer_token(scope: dict[str, Any]) -> str:
    """The API key of ``Authorization: Bearer <key>``, or ``""``."""
    auth = _header(scope, b"authorization")
    return auth[7:].strip() if auth and auth[:7].lower() == "bearer " else ""


def _body_capped(scope: dict[str, Any]) -> bool:
    return not scope.get("path", "").startswith("/files/upload/")


def _capped_receive(receive: Callable) -> Callable:
    """``receive`` that raises 413 once more than ``limits.BODY_BYTES`` have arrived."""
    received = 0

    async def capped() -> dict[str, Any]:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limits.BODY_BYTES:
                raise body_too_large()
        return message

    return capped


async def _send_error(
    send: Callable,
    status: int,
    code: str,
    message: str,
    trace_header: tuple[bytes, bytes],
    close: bool = False,
) -> None:
    """The spec's Error body, sent before any route runs."""
    payload = error_payload(status, code, message, trace_header[1].decode())
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
        trace_header,
    ]
    if close:  # the unread body must not be taken for the next request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def _abort_connection(send: Callable) -> None:
    """Abort the TCP connection under uvicorn's ``send`` (a bound method of its cycle)."""
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        raise RuntimeError("cannot drop the connection: server transport not reachable")
    transport.abort()
    # Tell uvicorn the exchange is over, so it does not try (and log) a 500 on a dead socket.
    for flag in ("response_started", "response_complete"):
        if hasattr(cycle, flag):
            setattr(cycle, flag, True)

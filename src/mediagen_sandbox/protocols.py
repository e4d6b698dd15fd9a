"""uvicorn's HTTP/1.1 protocols with a bounded request head, answered 431 in the Error shape.

Why: as shipped, uvicorn's httptools protocol (the one ``uvicorn[standard]`` runs) reads a
request line and headers of any size: a 20 MB header was buffered and the request served. Its
h11 protocol is bounded by ``h11_max_incomplete_event_size`` (16 KiB by default) but answers an
oversized head with a plain-text ``400 Invalid HTTP request received.``, although h11 itself
says 431 (``error_status_hint``). Here both stop at ``limits.HEAD_BYTES`` and answer
``431 Request Header Fields Too Large`` with the spec's Error body (code ``client_error``, a
trace id in the body and in ``X-Trace-Id``), then close the connection: no route runs and the
rest of the head is never read.

Each head is measured twice: the bytes received while it is incomplete (what bounds the memory
a slow, endless header can take), and the request line and headers once parsed (what catches a
head that arrived whole in one read, which h11's own bound lets through and which the httptools
parser hands over a header at a time).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from . import limits
from .asgi import error_payload, new_trace_id

LINGER_SECONDS = 1.0
MESSAGE = f"The request line and headers are larger than the limit of {limits.HEAD_BYTES} bytes."


def head_too_large(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole 431 response, ready to write to the socket."""
    trace_id = new_trace_id()
    body = error_payload(431, "client_error", MESSAGE, trace_id)
    headers = [
        *default_headers,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-trace-id", trace_id.encode()),
        (b"connection", b"close"),
    ]
    lines = [b"HTTP/1.1 431 Request Header Fields Too Large"]
    lines += [name + b": " + value for name, value in headers]
    return b"\r\n".join([*lines, b"", body])


class _BoundedConnection(h11.Connection):
    """h11's server side, which also refuses a head that arrived whole (h11's own bound,
    ``max_incomplete_event_size``, holds only while the head is incomplete)."""

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            size = len(event.target) + sum(len(n) + len(v) + 4 for n, v in event.headers)
            if size > limits.HEAD_BYTES:
                raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


class _Refusal:
    """Sends the 431 so that the client reads it: the connection's sending side is closed
    after it (FIN), and what the client still sends is read and dropped for
    ``LINGER_SECONDS`` before the socket closes. (Closing a socket with unread data in it
    resets the connection, and a reset can destroy the answer before the client reads it.)"""

    transport: Any
    server_state: Any
    loop: Any
    _refused = False

    def refuse(self) -> None:
        if self._refused or self.transport.is_closing():
            return
        self._refused = True
        self.transport.write(head_too_large(self.server_state.default_headers))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)  # type: ignore[misc]


class BoundedH11Protocol(_Refusal, H11Protocol):
    """h11, with the head capped at ``limits.HEAD_BYTES``: the error h11 raises for a head over
    it (hint 431) is answered 431; any other stays uvicorn's 400."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.conn = _BoundedConnection(h11.SERVER, max_incomplete_event_size=limits.HEAD_BYTES)

    def send_400_response(self, msg: str) -> None:
        error = sys.exc_info()[1]  # called while uvicorn handles h11's RemoteProtocolError
        if getattr(error, "error_status_hint", None) == 431:
            self.refuse()
        else:
            super().send_400_response(msg)


def _httptools_protocol() -> type[asyncio.Protocol] | None:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # httptools is not installed: uvicorn uses h11
        return None

    class _HeadTooLarge(Exception):
        """Raised in a parser callback to stop parsing a head that is over the limit."""

    class BoundedHttpToolsProtocol(_Refusal, HttpToolsProtocol):
        """httptools, with the head capped at ``limits.HEAD_BYTES``."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._in_head = True  # until this request's headers are complete
            self._received = 0  # bytes received since this request's head began
            self._parsed = 0  # size of its request line and the headers parsed so far
            self._too_large = False

        def data_received(self, data: bytes) -> None:
            if self._in_head:
                self._received += len(data)
            super().data_received(data)
            if self._in_head and self._received > limits.HEAD_BYTES:
                self.refuse()

        def on_url(self, url: bytes) -> None:
            self._count(len(url) + 16)  # the method, the version, spaces and CRLF
            super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            self._count(len(name) + len(value) + 4)  # ": " and CRLF
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_head, self._received, self._parsed = True, 0, 0
            super().on_message_complete()

        def _count(self, size: int) -> None:
            self._parsed += size
            if self._parsed > limits.HEAD_BYTES:
                self._too_large = True
                raise _HeadTooLarge  # httptools raises it on as HttpParserError

        def send_400_response(self, msg: str) -> None:
            if self._too_large:
                self.refuse()
            else:
                super().send_400_response(msg)

    return BoundedHttpToolsProtocol


_BOUNDED_HTTPTOOLS = _httptools_protocol()

#: ``--http`` choices, bounded; "auto" is what uvicorn's would pick (httptools where installed)
PROTOCOLS: dict[str, type[asyncio.Protocol]] = {
    "auto": _BOUNDED_HTTPTOOLS or BoundedH11Protocol,
    "h11": BoundedH11Protocol,
    **({"httptools": _BOUNDED_HTTPTOOLS} if _BOUNDED_HTTPTOOLS is not None else {}),
}

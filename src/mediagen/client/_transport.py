"""Transport failures as the client's errors, and what never goes to file URLs."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TypeVar

import httpx

from mediagen.client._download import DownloadError
from mediagen.client._effects import Fetched
from mediagen.client._errors import APIConnectionError, APITimeoutError
from mediagen.client._redact import MASK, redact

NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


def connection_error(
    exc: Exception, method: str, where: str, secrets: tuple[str, ...] = ()
) -> APIConnectionError:
    """An APIConnectionError / APITimeoutError for a transport failure; the transport's text
    is redacted (a protocol error may quote a header it refused)."""
    cls = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    what = "timed out" if cls is APITimeoutError else "failed"
    return cls(
        f"{method} {where} {what} after retries: {type(exc).__name__}: {redact(str(exc), secrets)}",
        method=method,
        path=where,
    )


def deadline_error(
    method: str,
    where: str,
    seconds: float | None = None,
    attempts: int | None = None,
    last: str | None = None,
) -> APITimeoutError:
    """The request could not be answered within the time its caller had left: within its
    ``seconds`` deadline, after ``attempts`` tries, the ``last`` of which met ``last``."""
    text = f"{method} {where} got no answer before the deadline"
    if seconds is not None:
        # to a tenth: the time the request had, counted from its own start, is a few
        # milliseconds short of the call's timeout when the call did something first
        text = f"{method} {where} got no answer within its {round(seconds, 1):g} s deadline"
    if attempts is not None:
        tried = f"{attempts} attempt{'' if attempts == 1 else 's'}"
        text += f" ({tried}, retries and pauses included" + (f"; last: {last})" if last else ")")
    return APITimeoutError(text, method=method, path=where)


def file_url_path(url: str) -> str:
    """A file URL without its query (the signature) for messages."""
    return url.split("?", 1)[0]


def strip_auth(request: httpx.Request) -> httpx.Request:
    """Upload and output URLs never get the API key, whatever the http client's defaults."""
    for name in ("Authorization", "Proxy-Authorization"):
        if name in request.headers:
            del request.headers[name]
    return request


def check_final_status(status: int, where: str) -> None:
    """After redirects a download must end in a 2xx (an error status is raised by the caller):
    a 3xx left over (no Location, 304 ...) or a 1xx is no file."""
    if status < 200 or 300 <= status < 400:
        raise DownloadError(f"GET {where} ended with HTTP {status}, not a file; not saved")


def fetched(headers: httpx.Headers, size: int) -> Fetched:
    declared = headers.get("content-length")
    return Fetched(
        headers.get("content-type"),
        size,
        int(declared) if declared and declared.isdigit() else None,
    )


@contextmanager
def cut_at(response: httpx.Response, left: float | None) -> Iterator[None]:
    """A blocking read waits up to its timeout, which was fixed when the body began; with
    ``left`` seconds to a deadline, the connection is shut then, so a read still blocked ends
    at the deadline itself (as an incomplete body) instead of up to a whole timeout later."""
    stream = response.extensions.get("network_stream")
    sock = None if stream is None else stream.get_extra_info("socket")
    if left is None or not isinstance(sock, socket.socket):
        yield
        return
    timer = threading.Timer(left, _shut, (sock,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):  # already closed: the download ended on its own
        sock.shutdown(socket.SHUT_RDWR)


#: request headers that carry a credential, whatever their value
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "cookie")


_E = TypeVar("_E", bound=BaseException)


def scrub_chain(exc: _E, secrets: tuple[str, ...] = ()) -> _E:
    """``exc`` and every exception chained to it (``__cause__``, ``__context__``) with the
    headers of the requests they hold masked: httpx keeps the failed request on its errors
    (``.request``), Authorization included, and an error reporter that serialises a chain
    would send the key along. The requests are done with (each attempt builds its own)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        found = pending.pop()
        if found is None or id(found) in seen:
            continue
        seen.add(id(found))
        request = getattr(found, "_request", None)  # httpx.RequestError (``.request`` raises)
        response = getattr(found, "response", None)  # httpx.HTTPStatusError
        for held in (request, getattr(response, "request", None)):
            if isinstance(held, httpx.Request):
                held.headers = masked_headers(held.headers, secrets)
        pending += [found.__cause__, found.__context__]
    return exc


def masked_headers(headers: httpx.Headers, secrets: tuple[str, ...]) -> httpx.Headers:
    """A copy of ``headers`` with every credential header (and any value holding a secret)
    replaced by the mask."""
    kept = []
    for name, value in headers.multi_items():
        if name.lower() in CREDENTIAL_HEADERS or any(s and s in value for s in secrets):
            value = MASK
        kept.append((name, value))
    return httpx.Headers(kept)

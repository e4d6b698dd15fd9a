"""A request head (request line and headers) is capped at 64 KiB: over it the sandbox answers
431 with the spec's Error body and closes the connection, before any route runs; under it the
request is served as usual. Both HTTP/1.1 implementations: httptools (what ``uvicorn[standard]``
runs, and the ``sandbox`` fixture) and h11 (``--http h11``, used where httptools is missing).

The requests go over raw sockets: a client library would refuse to send such heads, or would
not let a test trickle an endless one.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import h11
import httpx
import pytest
from sandbox_faults import assert_spec_error

from mediagen_sandbox import limits
from mediagen_sandbox.testing import SandboxHandle, running_sandbox

KIB = 1 << 10


@pytest.fixture(scope="module", params=["httptools", "h11"])
def server(request, sandbox) -> Iterator[SandboxHandle]:
    if request.param == "httptools":
        yield sandbox
        return
    with running_sandbox(speed=0.0, args=["--http", "h11"]) as handle:
        yield handle


def _connect(server: SandboxHandle) -> socket.socket:
    url = urlsplit(server.base_url)
    return socket.create_connection((url.hostname, url.port), timeout=30)


def _response(sock: socket.socket) -> tuple[httpx.Response, bool]:
    """Read one response; and whether the server closed the connection after it."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))  # our side's state
    conn.send(h11.EndOfMessage())
    status, headers, body = 0, [], b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(sock.recv(65536))
        elif isinstance(event, h11.Response):
            status, headers = event.status_code, event.headers
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            break
    closed = sock.recv(1) == b""
    return httpx.Response(status, headers=list(headers), content=body), closed


def _head(target: str, headers: list[tuple[str, str]], end: bool = True) -> bytes:
    lines = [f"GET {target} HTTP/1.1", "Host: 127.0.0.1", *(f"{n}: {v}" for n, v in headers)]
    return ("\r\n".join(lines) + ("\r\n\r\n" if end else "\r\n")).encode()


def _exchange(server: SandboxHandle, head: bytes) -> tuple[httpx.Response, bool]:
    with _connect(server) as sock:
        sock.sendall(head)
        return _response(sock)


def _assert_431(response: httpx.Response, closed: bool) -> None:
    error = assert_spec_error(response, 431, "client_error")
    assert str(limits.HEAD_BYTES) in error["message"]
    assert error["details"] is None
    assert response.headers["connection"] == "close"
    assert closed


def test_one_header_over_the_cap_is_431(server):
    key = ("Authorization", f"Bearer {server.api_key}")
    response, closed = _exchange(server, _head("/v1/credits", [key, ("X-Big", "a" * 100 * KIB)]))
    _assert_431(response, closed)


def test_many_small_headers_over_the_cap_are_431(server):
    many = [(f"X-Header-{n}", "b" * 30) for n in range(2500)]  # ~110 KB in all
    _assert_431(*_exchange(server, _head("/v1/credits", many)))


def test_a_long_request_line_is_431(server):
    _assert_431(*_exchange(server, _head("/v1/credits?q=" + "c" * 80 * KIB, [])))


def test_a_head_that_never_ends_is_answered_431_once_over_the_cap(server):
    """A slow head with no end (one endless header, a piece at a time): the answer comes as
    soon as the cap is passed, not when (never) the head is complete."""
    with _connect(server) as sock:
        sock.sendall(_head("/v1/credits", [], end=False) + b"X-Endless: ")
        sent = 0
        while not select.select([sock], [], [], 0.005)[0]:  # until the server answers
            assert sent < 4 * limits.HEAD_BYTES, "no answer to a head four times the cap"
            sock.sendall(b"d" * 4 * KIB)
            sent += 4 * KIB
        assert sent >= limits.HEAD_BYTES - 4 * KIB, "answered before the cap was reached"
        _assert_431(*_response(sock))


def test_a_head_just_under_the_cap_is_served(server):
    key = ("Authorization", f"Bearer {server.api_key}")
    filler = ("X-Filler", "e" * (limits.HEAD_BYTES - 2 * KIB))
    close = ("Connection", "close")
    response, _closed = _exchange(server, _head("/v1/credits", [key, filler, close]))
    assert response.status_code == 200, response.text
    assert response.json()["balance"] >= 0
    again = httpx.get(f"{server.base_url}/v1/credits", headers=server.headers)
    assert again.status_code == 200

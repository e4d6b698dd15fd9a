"""Real misbehaving servers on loopback for the client's fault tests.

- :class:`SilentServer`: accepts TCP connections and never answers (a hung service).
- :class:`FakeServer`: a threaded HTTP server whose answers a test writes as a function
  ``respond(request) -> Reply | None`` (None: close the connection without answering).
- :class:`Relay`: a :class:`FakeServer` that forwards every request to a real sandbox and
  relays the answer, except that it can drop answers (after forwarding: the service did the
  work, the client never hears of it) and can go down (connection refused) and come back on
  the same port.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


class SilentServer:
    """Listens on 127.0.0.1, accepts every connection, reads nothing, answers nothing."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.accepted: list[socket.socket] = []
        self._stop = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self._stop = True
        self._sock.close()
        for conn in self.accepted:
            conn.close()

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Request:
    method: str
    path: str  # with the query
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """An answer. With ``hold``, the body is sent and then the connection is kept open (the
    rest never comes) until the event is set: a download that stalls part-way. With
    ``trickle``, the body is sent one byte every ``trickle`` seconds (a slow link that never
    stalls long enough for a read to time out); with ``trickle_head``, the status line and
    headers are, before the body comes whole."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    hold: threading.Event | None = None
    trickle: float | None = None
    trickle_head: float | None = None


Responder = Callable[[Request], "Reply | None"]


def _head(reply: Reply) -> bytes:
    """The status line and headers of ``reply``, as sent before its body."""
    lines = [f"HTTP/1.1 {reply.status} Trickled", *(f"{k}: {v}" for k, v in reply.headers.items())]
    lines += [f"Content-Length: {len(reply.body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = Request(self.command, self.path, dict(self.headers.items()), body)
        self.server.owner.seen.append(request)
        reply = self.server.owner.respond(request)
        if reply is None:  # drop: the connection closes with no answer at all
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.trickle_head is not None:
            self._trickle(_head(reply), reply.trickle_head)
            with suppress(OSError):  # the client gave up before the head was whole
                self.wfile.write(reply.body)
            self.close_connection = True
            return
        self.send_response(reply.status)
        headers = {k.lower(): v for k, v in reply.headers.items()}
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if "content-length" not in headers:
            self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and reply.trickle is not None:
            self._trickle(reply.body, reply.trickle)
        elif self.command != "HEAD":
            self.wfile.write(reply.body)
        if reply.hold is not None:
            self.wfile.flush()
            reply.hold.wait(120)
        self.close_connection = True

    def _trickle(self, body: bytes, pause: float) -> None:
        for index in range(len(body)):
            try:
                self.wfile.write(body[index : index + 1])
                self.wfile.flush()
            except OSError:  # the client gave up and closed the connection
                return
            time.sleep(pause)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeServer


class FakeServer:
    """An HTTP server on 127.0.0.1 answering with ``respond``; ``seen`` lists the requests."""

    def __init__(self, respond: Responder, port: int = 0) -> None:
        self.respond = respond
        self.seen: list[Request] = []
        self.port = port
        self._server: _Server | None = None
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        """Listen (again, on the same port)."""
        server = _Server(("127.0.0.1", self.port), _Handler)
        server.owner = self
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()  # fmt: skip

    def down(self) -> None:
        """Stop listening: new connections are refused until :meth:`up`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    close = down

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()


class Relay(FakeServer):
    """Forwards to ``target`` (a real sandbox); ``drop(request)`` True loses that answer."""

    def __init__(self, target: str, drop: Callable[[Request], bool] = lambda r: False) -> None:
        self.target = target
        self.drop = drop
        self.forwarded = 0
        self.dropped = 0
        self._http = httpx.Client(base_url=target, timeout=60)
        super().__init__(self._forward)

    def _forward(self, request: Request) -> Reply | None:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host",)}
        answer = self._http.request(
            request.method, request.path, headers=headers, content=request.body
        )
        self.forwarded += 1
        if self.drop(request):
            self.dropped += 1
            return None
        kept = {
            k: v
            for k, v in answer.headers.items()
            if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                 "content-encoding")
        }  # fmt: skip
        return Reply(answer.status_code, kept, answer.content)

    def down(self) -> None:
        super().down()

    def close(self) -> None:
        super().down()
        self._http.close()


def submits(request: Request) -> bool:
    """The submit endpoints (the answers whose loss could cost money)."""
    return request.method == "POST" and request.path.split("?")[0] in (
        "/v1/images",
        "/v1/videos",
        "/v1/audio",
    )


def example_request(sandbox, tenant, model: str) -> dict:
    """The catalog's ready-to-send request of ``model`` (its first mode)."""
    response = httpx.get(f"{sandbox.base_url}/v1/models/{model}", headers=tenant.headers,
                         timeout=30)  # fmt: skip
    response.raise_for_status()
    examples = response.json()["example_request"]
    return dict(next(iter(examples.values())))


def reserves(sandbox, org_id: str) -> list[dict]:
    """The organization's ledger reservations: one per job the service created."""
    return [e for e in sandbox.admin.ledger(org_id)["entries"] if e.get("kind") == "reserve"]


def timed(call: Callable[[], object], limit: float) -> tuple[float, BaseException | None, bool]:
    """Run ``call`` on a thread and give it ``limit`` seconds: (seconds taken, what it raised,
    whether it ended at all). A call that ignores its deadline leaves the test here instead of
    hanging the suite."""
    outcome: dict = {}

    def run() -> None:
        started = time.monotonic()
        try:
            call()
        except BaseException as exc:
            outcome["error"] = exc
        outcome["took"] = time.monotonic() - started

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(limit)
    return outcome.get("took", float("inf")), outcome.get("error"), not thread.is_alive()

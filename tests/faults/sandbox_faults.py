"""What the sandbox's fault and abuse tests share: plain httpx, one raw keep-alive connection,
catalog-driven request bodies, and waiting for conditions (never for a fixed time).

The sandbox is attacked over loopback exactly as a careless or hostile caller would: bodies
built by hand, connections reused after an error, processes killed with SIGKILL.
"""

from __future__ import annotations

import io
import json
import os
import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import h11
import httpx

ENDPOINTS = {"image": "/v1/images", "video": "/v1/videos", "audio": "/v1/audio"}


def api(sandbox, tenant, timeout: float = 60.0) -> httpx.Client:
    return httpx.Client(base_url=sandbox.base_url, headers=tenant.headers, timeout=timeout)


def catalog(sandbox) -> list[dict]:
    r = httpx.get(f"{sandbox.base_url}/v1/models", headers=sandbox.headers, timeout=30)
    r.raise_for_status()
    return r.json()["data"]


def examples(sandbox) -> list[tuple[dict, dict]]:
    """(catalog entry, example request) for every mode of every model, as the catalog shows."""
    return [
        (entry, dict(body))
        for entry in catalog(sandbox)
        for body in entry.get("example_request", {}).values()
    ]


def image_request() -> dict:
    """A cheap one-image request that needs no assets."""
    return {"model": "pixel-1", "prompt": "a lighthouse", "aspect_ratio": "1:1"}


def credits(c: httpx.Client) -> tuple[float, float]:
    """(balance, reserved) of the client's key."""
    body = c.get("/v1/credits").raise_for_status().json()
    return body["balance"], body["reserved"]


def generation_count(c: httpx.Client) -> int:
    return len(c.get("/v1/generations", params={"limit": 100}).raise_for_status().json()["data"])


def assert_spec_error(response: httpx.Response, status: int, code: str) -> dict:
    """The spec's Error body with ``status`` and ``code``; returns ``error``."""
    assert response.status_code == status, response.text[:2000]
    error = response.json()["error"]
    assert error["code"] == code, error
    assert error["message"], error
    assert error["trace_id"].startswith("trace_"), error
    assert response.headers["x-trace-id"] == error["trace_id"]
    return error


def wait_until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.2)


def wait_generation(c: httpx.Client, generation_id: str, timeout: float = 120.0) -> dict:
    def settled():
        gen = c.get(f"/v1/generations/{generation_id}").raise_for_status().json()
        return gen if gen["status"] != "pending" else None

    return wait_until(settled, timeout, f"generation {generation_id} settles")


def png_bytes(width: int = 64, height: int = 48, noise: bool = False) -> bytes:
    """A valid PNG; with ``noise`` it barely compresses (about 3 bytes a pixel)."""
    from PIL import Image

    if noise:
        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (30, 120, 200))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def register_upload(c: httpx.Client, data: bytes, content_type: str = "image/png") -> dict:
    body = {"filename": "ref.png", "content_type": content_type, "size_bytes": len(data)}
    return c.post("/v1/uploads", json=body).raise_for_status().json()


def put_upload(ticket: dict, content: Any, timeout: float = 60.0) -> httpx.Response:
    """PUT bytes (or an iterator of chunks) to the ticket's signed URL, as registered."""
    return httpx.put(
        ticket["upload_url"], content=content, headers=ticket["required_headers"], timeout=timeout
    )


class ServerClosed(Exception):
    """The server closed the keep-alive connection instead of answering."""


class KeepAlive:
    """One HTTP/1.1 connection, reused for every request (h11 does the framing): shows
    whether an answer left the connection usable for the next request."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(base_url)
        self.host = parts.netloc
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout)
        self.conn = h11.Connection(our_role=h11.CLIENT)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> KeepAlive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        target: str,
        headers: dict[str, str] | None = None,
        body: bytes | dict | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body); ``ServerClosed`` if the connection is gone."""
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
        if isinstance(body, dict):
            body = json.dumps(body).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        fields = [("Host", self.host), *(headers or {}).items()]
        if body is not None:
            fields.append(("Content-Length", str(len(body))))
        try:
            self._send(h11.Request(method=method, target=target, headers=fields))
            if body:
                self._send(h11.Data(data=body))
            self._send(h11.EndOfMessage())
        except OSError as exc:
            raise ServerClosed(str(exc)) from exc
        response, chunks = None, []
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    data = self.sock.recv(65536)
                except OSError as exc:
                    raise ServerClosed(str(exc)) from exc
                if not data and response is None:
                    raise ServerClosed("connection closed before a response")
                self.conn.receive_data(data)
            elif isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
        assert response is not None
        found = {k.decode().lower(): v.decode() for k, v in response.headers}
        return response.status_code, found, b"".join(chunks)

    def _send(self, event: Any) -> None:
        data = self.conn.send(event)
        if data:
            self.sock.sendall(data)

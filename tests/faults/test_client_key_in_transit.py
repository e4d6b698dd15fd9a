"""The key crosses the network only encrypted or not at all: plain ``http://`` beyond this
machine is refused before anything is sent (unless allowed), and after a connection error no
exception the client raises holds the key on a chained httpx request."""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import socket
import traceback
from typing import Any

import httpx
import pytest

import mediagen

KEY = "mgk_live_2b7e151628aed2a6abf7158809cf4f3c"


@pytest.mark.parametrize(
    "url",
    ["http://api.example.com", "http://10.0.0.8:8765", "http://[2001:db8::1]:80/v1",
     "http://user:pw@media.example.org", "http://127.0.0.1.example.com",
     # with the root's dot, a name is asked of DNS (which may answer any address), not the
     # hosts file: these are not this machine
     "http://localhost.:8000", "http://LOCALHOST.", "http://127.0.0.1.:8000"],
)  # fmt: skip
def test_plain_http_to_another_machine_is_refused_before_any_connection(url, monkeypatch):
    monkeypatch.delenv("MEDIAGEN_ALLOW_INSECURE_HTTP", raising=False)
    with pytest.raises(ValueError, match="plain http:// to another machine") as refused:
        mediagen.Client(api_key=KEY, base_url=url, journal=False)
    message = str(refused.value)
    for said in ("https://", "allow_insecure_http=True", "MEDIAGEN_ALLOW_INSECURE_HTTP=1"):
        assert said in message
    assert KEY not in message
    assert "pw@" not in message
    monkeypatch.setenv("MEDIAGEN_BASE_URL", url)
    with pytest.raises(ValueError, match="plain http://"):
        mediagen.AsyncClient(api_key=KEY, journal=False)


def test_a_copy_with_another_base_url_is_checked_too(sandbox, tenant):
    ok = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, journal=False)
    with ok, pytest.raises(ValueError, match="plain http://"):
        ok.to_async(base_url="http://api.example.com")


@pytest.mark.parametrize(
    "url", ["https://api.example.com", "https://10.0.0.8:8443", "http://api.example.com"]
)
def test_https_or_an_explicit_opt_in_is_accepted(url, monkeypatch):
    """Making a client sends nothing; these only have to be accepted."""
    monkeypatch.delenv("MEDIAGEN_ALLOW_INSECURE_HTTP", raising=False)
    allow = url.startswith("http://")
    mediagen.Client(api_key=KEY, base_url=url, journal=False, allow_insecure_http=allow).close()
    if allow:
        monkeypatch.setenv("MEDIAGEN_ALLOW_INSECURE_HTTP", "1")
        mediagen.Client(api_key=KEY, base_url=url, journal=False).close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LocalHost", "[::1]", "127.7.7.7"])
def test_this_machine_over_plain_http_is_fine(host, sandbox, monkeypatch):
    monkeypatch.delenv("MEDIAGEN_ALLOW_INSECURE_HTTP", raising=False)
    port = sandbox.base_url.rsplit(":", 1)[1]
    mediagen.Client(api_key=KEY, base_url=f"http://{host}:{port}", journal=False).close()


def test_the_sandbox_is_reached_over_loopback_as_before(sandbox, tenant):
    with mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, journal=False) as c:
        assert c.credits.get().balance is not None


# --- the key on a failed request ---------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _everything_reachable(error: BaseException) -> list[str]:
    """Every text an error reporter could get from ``error`` and what it chains to: messages,
    reprs, attributes, the httpx requests and responses they hold, the formatted traceback
    and the pickle."""
    shown = ["".join(traceback.format_exception(error))]
    seen: set[int] = set()
    pending: list[Any] = [error]
    while pending:
        found = pending.pop()
        if found is None or id(found) in seen:
            continue
        seen.add(id(found))
        shown += [str(found), repr(found), repr(getattr(found, "__dict__", {}))]
        request = getattr(found, "_request", None)
        response = getattr(found, "response", None)
        for held in (request, getattr(response, "request", None)):
            if isinstance(held, httpx.Request):
                shown += [repr(held.headers), repr(held.headers.raw), str(held.url)]
                shown += [held.headers.get("authorization") or ""]
        with contextlib.suppress(Exception):  # not every exception pickles
            shown.append(repr(pickle.dumps(found)))
        pending += [found.__cause__, found.__context__]
    assert len(seen) >= 3  # the chain really reaches the transport's errors
    return shown


def _calls(client: Any):
    yield "read", lambda: client.credits.get()
    yield "submit", lambda: client.images.create(model="pixel-1", prompt="p", validate=False)
    yield "wait", lambda: client.generations.wait("00000000-0000-4000-8000-000000000000",
                                                  timeout=1.0)  # fmt: skip


def test_no_error_after_a_connection_failure_holds_the_key(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}"
    client = mediagen.Client(api_key=KEY, base_url=url, cache_dir=tmp_path, max_retries=1,
                             journal=tmp_path / "journal.jsonl")  # fmt: skip
    for name, call in _calls(client):
        with pytest.raises(mediagen.MediagenError) as caught:
            call()
        for text in _everything_reachable(caught.value):
            assert KEY not in text, name
    client.close()


def test_the_async_client_too(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}"
    errors: list[BaseException] = []

    async def main() -> None:
        async with mediagen.AsyncClient(api_key=KEY, base_url=url, cache_dir=tmp_path,
                                        max_retries=1, journal=False) as client:  # fmt: skip
            for _, call in _calls(client):
                try:
                    await call()
                except mediagen.MediagenError as exc:
                    errors.append(exc)

    asyncio.run(main())
    assert len(errors) == 3
    for error in errors:
        for text in _everything_reachable(error):
            assert KEY not in text

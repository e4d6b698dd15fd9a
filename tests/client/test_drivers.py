"""The drivers perform the retry policy: a scripted transport (no server) checks the loop.

The contract tests do the same against the real sandbox; these pin the exact sequence of
attempts and waits, for the blocking and the async driver alike.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

import mediagen

BASE = "http://127.0.0.1:9"
KEY = "mgk_driver_SECRET"
GEN = {"id": "g1", "type": "image", "status": "pending", "model": "m", "prompt": "p",
       "created_at": "2026-01-01T00:00:00Z"}  # fmt: skip


def _script(*steps):
    """A handler answering each request with the next step (a Response or an exception)."""
    seen: list[httpx.Request] = []
    queue = list(steps)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        step = queue.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    return handler, seen


def _error(status, code, headers=None):
    body = {"error": {"code": code, "message": code, "details": None, "trace_id": "t"}}
    return httpx.Response(status, json=body, headers=headers or {})


def _client(handler, sleeps, **options):
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return mediagen.Client(
        api_key=KEY, base_url=BASE, http_client=http, sleep=sleeps.append, journal=False,
        validate=False, **options,
    )  # fmt: skip


def test_5xx_and_dropped_connections_are_retried_with_backoff(tmp_path):
    handler, seen = _script(
        _error(503, "internal_error"),
        httpx.ReadError("connection reset"),
        httpx.Response(200, json=GEN),
    )
    sleeps: list[float] = []
    client = _client(handler, sleeps, cache_dir=tmp_path)
    assert client.generations.get("g1").id == "g1"
    assert len(seen) == 3
    assert len(sleeps) == 2
    assert all(0 < s <= 8 for s in sleeps)


@pytest.mark.parametrize(
    ("status", "code"), [(401, "unauthenticated"), (402, "payment_required"), (409, "conflict")]
)
def test_final_statuses_are_sent_once(tmp_path, status, code):
    handler, seen = _script(_error(status, code))
    client = _client(handler, [], cache_dir=tmp_path)
    with pytest.raises(mediagen.APIError) as caught:
        client.images.create(model="m", prompt="p")
    assert caught.value.status == status
    # sent once (a 402 is then explained with reads of the estimate and the balance)
    assert [r.method for r in seen].count("POST") == 1
    assert seen[0].method == "POST"


def test_a_submit_keeps_one_idempotency_key_over_every_retry(tmp_path):
    handler, seen = _script(
        httpx.ReadError("dropped after commit"),
        _error(502, "internal_error"),
        httpx.Response(200, json=GEN),
    )
    client = _client(handler, [], cache_dir=tmp_path)
    client.images.create(model="m", prompt="p")
    keys = {r.headers["Idempotency-Key"] for r in seen}
    bodies = {json.loads(r.content)["idempotency_key"] for r in seen}
    assert len(seen) == 3
    assert len(keys) == 1
    assert keys == bodies


def test_429_holds_the_key_for_retry_after_then_goes_on(tmp_path):
    handler, seen = _script(
        _error(429, "rate_limited", {"Retry-After": "2"}), httpx.Response(200, json=GEN)
    )
    sleeps: list[float] = []
    client = _client(handler, sleeps, cache_dir=tmp_path)
    client.generations.get("g1")
    assert len(seen) == 2
    assert sleeps
    assert 2 <= sleeps[0] <= 2.3


def test_retries_give_up_with_the_last_error(tmp_path):
    handler, seen = _script(*[_error(500, "internal_error")] * 3)
    client = _client(handler, [], cache_dir=tmp_path, max_retries=2)
    with pytest.raises(mediagen.ServerError):
        client.generations.get("g1")
    assert len(seen) == 3


def test_connection_failure_after_retries_names_no_secret(tmp_path):
    handler, _ = _script(*[httpx.ConnectError("refused")] * 4)
    client = _client(handler, [], cache_dir=tmp_path)
    with pytest.raises(mediagen.APIConnectionError) as caught:
        client.credits.get()
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)


def test_the_async_driver_runs_the_same_policy(tmp_path):
    handler, seen = _script(
        _error(503, "internal_error"),
        _error(429, "rate_limited", {"Retry-After": "1"}),
        httpx.Response(200, json=GEN),
    )
    sleeps: list[float] = []

    async def fake_sleep(seconds):
        sleeps.append(seconds)

    async def main():
        http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        async with mediagen.AsyncClient(
            api_key=KEY + "async", base_url=BASE, http_client=http, sleep=fake_sleep,
            journal=False, validate=False, cache_dir=tmp_path,
        ) as client:  # fmt: skip
            gen = await client.images.create(model="m", prompt="p")
        await http.aclose()
        return gen

    gen = asyncio.run(main())
    assert gen.id == "g1"
    assert len(seen) == 3
    assert len({r.headers["Idempotency-Key"] for r in seen}) == 1
    assert len(sleeps) == 2
    assert sleeps[1] >= 1


def test_the_resource_of_a_kind_is_the_clients_own_and_an_unknown_kind_is_named():
    """``client.resource(kind)``: for code that holds the kind as data (a table's rows, a
    magic's line), the same resource objects as ``client.images`` and its twins."""
    with mediagen.Client(api_key=KEY, base_url=BASE, journal=False) as client:
        assert client.resource("image") is client.images
        assert client.resource("video") is client.videos
        assert client.resource("audio") is client.audio
        with pytest.raises(ValueError, match="one of video, image, audio, not 'images'"):
            client.resource("images")

    async def main() -> None:
        async with mediagen.AsyncClient(api_key=KEY, base_url=BASE, journal=False) as client:
            assert client.resource("video") is client.videos
            with pytest.raises(ValueError, match="'picture'"):
                client.resource("picture")

    asyncio.run(main())

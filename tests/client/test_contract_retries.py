"""Retries against the real sandbox: a dropped submit charged once, a 429 storm, 5xx."""

from __future__ import annotations

import threading

import httpx
import pytest
from client_helpers import Recorder, example, reserves_for

import mediagen


def test_a_dropped_connection_after_commit_is_retried_and_charged_once(
    sandbox, tenant, make_client, catalog
):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    request = example(catalog, "pixel-1")
    request["prompt"] += " [[drop]]"
    before = client.credits.get().balance
    gen = client.images.create(**request)
    posts = [s for s in recorder.sent if s.method == "POST"]
    assert len(posts) == 2  # the first one was committed, then its answer was lost
    assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
    assert posts[0].status is None
    assert posts[1].status == 200
    gen = client.generations.wait(gen, timeout=30, download=False)
    assert len(reserves_for(sandbox, tenant.org_id, gen.id)) == 1
    assert client.credits.get().balance == round(before - gen.credits_charged, 2)
    assert len(list(client.generations.list())) == 1


def test_admin_dropped_submits_are_retried_too(sandbox, tenant, client, catalog):
    with sandbox.admin.config_changed(drop_next_submits=1):
        gen = client.images.create(**example(catalog, "pixel-1"))
    assert len(reserves_for(sandbox, tenant.org_id, gen.id)) == 1


def test_a_429_is_raised_with_retry_after_when_retries_are_off(sandbox, tenant, make_client):
    client = make_client(max_retries=0)

    def hammer():
        for _ in range(5):
            client.credits.get()

    with (
        sandbox.admin.key_rate_limited(tenant.key_id, 1, burst=1),
        pytest.raises(mediagen.RateLimitError) as caught,
    ):
        hammer()
    assert caught.value.retry_after is not None
    assert caught.value.retry_after > 0
    assert "second" in caught.value.message or str(int(caught.value.retry_after)) in str(
        caught.value
    )


def test_a_429_storm_is_survived_and_retry_after_honoured(sandbox, tenant, make_client):
    recorder = Recorder()
    client = make_client(recorder=recorder, max_retries=10)
    with sandbox.admin.key_rate_limited(tenant.key_id, 20, burst=5):
        threads = [
            threading.Thread(target=lambda: [client.credits.get() for _ in range(4)])
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    ok = [s for s in recorder.sent if s.status == 200]
    limited = [s for s in recorder.sent if s.status == 429]
    assert len(ok) == 16  # every call succeeded in the end
    assert limited  # the storm really happened
    # Retry-After (whole seconds, at least 1 here) was honoured by the whole key: nothing
    # was sent in the second after a 429 came back (except a request another thread had
    # already let through the gate in the same instant: 50 ms of grace).
    for refused in limited:
        later = [s.at for s in recorder.sent if s.at > refused.answered_at + 0.05]
        assert all(at >= refused.answered_at + 0.95 for at in later)
    assert len(limited) < len(ok)


class FlakyTransport(httpx.HTTPTransport):
    """The real transport to the sandbox, except that the first ``n`` API calls get a 503."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.left = n

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.left > 0 and request.url.path.startswith("/v1"):
            self.left -= 1
            body = {"error": {"code": "internal_error", "message": "busy", "trace_id": None}}
            return httpx.Response(503, json=body)
        return super().handle_request(request)


def test_5xx_are_retried_and_a_retried_submit_is_charged_once(
    sandbox, tenant, make_client, catalog
):
    flaky = FlakyTransport(2)
    http = httpx.Client(transport=flaky, timeout=30)
    waits: list[float] = []
    client = make_client(http_client=http, sleep=waits.append)  # record the backoff only
    gen = client.images.create(**example(catalog, "pixel-1"), validate=False)
    assert flaky.left == 0
    assert len(waits) == 2
    assert waits[1] > 0
    assert len(reserves_for(sandbox, tenant.org_id, gen.id)) == 1
    flaky.left = 10
    with pytest.raises(mediagen.ServerError):
        client.credits.get()
    assert flaky.left == 10 - 4  # the first try and three retries
    http.close()

"""A 2xx answer whose body is not JSON (a captive portal's page, a proxy's, a cut body) is an
answer the client could not read, not an empty one: it is retried like a lost answer and never
becomes a model with every field None. A submit whose answer cannot be read may still have
created (and charged) the job, so it is journaled as unanswered and found again, charged once.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from client_faults import FakeServer, Relay, Reply, example_request, reserves, submits

import mediagen

PORTAL = Reply(200, {"Content-Type": "text/html"}, b"<html>Sign in to the Wi-Fi</html>")
KEY = "mgk_test_unreadable_answer_0000000000"


def _credits_after(garbled: int):
    """A service whose first ``garbled`` answers to ``GET /v1/credits`` are a portal's page."""
    answers = [0]

    def respond(request):
        answers[0] += 1
        if answers[0] <= garbled:
            return PORTAL
        body = {"balance": 42.0, "organization_balance": 42.0, "reserved": 0}
        return Reply(200, {"Content-Type": "application/json"}, json.dumps(body).encode())

    return respond


def test_an_answer_that_is_not_json_is_retried_like_a_lost_one(tmp_path):
    with (
        FakeServer(_credits_after(1)) as server,
        mediagen.Client(
            api_key=KEY, base_url=server.url, cache_dir=tmp_path, journal=False
        ) as client,
    ):
        assert client.credits.get().balance == 42.0
        assert len(server.seen) == 2


def test_an_answer_that_is_never_json_raises_instead_of_an_empty_model(tmp_path):
    with (
        FakeServer(_credits_after(1000)) as server,
        mediagen.Client(
            api_key=KEY, base_url=server.url, cache_dir=tmp_path, journal=False, max_retries=1
        ) as client,
    ):
        with pytest.raises(mediagen.UnexpectedResponseError, match="not JSON") as caught:
            client.credits.get()
        assert len(server.seen) == 2
        assert "/v1/credits" in str(caught.value)

        async def awaited() -> None:
            async with client.to_async() as aclient:
                await aclient.credits.get()

        with pytest.raises(mediagen.UnexpectedResponseError, match="not JSON"):
            asyncio.run(awaited())


GID = "00000000-0000-4000-8000-0000000000f1"
#: 200 answers to a generation's read that no wait can act on: a cut object, JSON's null, a page
NOT_A_GENERATION = {
    "cut": Reply(200, {"Content-Type": "application/json"}, b'{"id": "%s", "sta' % GID.encode()),
    "null": Reply(200, {"Content-Type": "application/json"}, b"null"),
    "html": PORTAL,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("timeout", [None, 30.0], ids=["no-timeout", "timeout"])
@pytest.mark.parametrize("answer", list(NOT_A_GENERATION))
def test_a_wait_ends_with_unexpected_response_when_the_generation_is_never_json(
    answer, timeout, tmp_path
):
    """A wait's poll rides out outages for ever, but a body that keeps coming back unreadable
    is no outage: the wait ends after the client's retries with ``UnexpectedResponseError``
    naming the endpoint, whether or not it has a timeout, and never says "still pending"."""
    with (
        FakeServer(lambda request: NOT_A_GENERATION[answer]) as server,
        mediagen.Client(
            api_key=KEY,
            base_url=server.url,
            cache_dir=tmp_path,
            journal=False,
            max_retries=2,
            poll_interval=(0.01, 0.01),
        ) as client,  # fmt: skip
    ):
        with pytest.raises(mediagen.UnexpectedResponseError) as caught:
            client.generations.wait(GID, timeout=timeout)
        assert f"/v1/generations/{GID}" in str(caught.value)
        assert len(server.seen) == (1 if answer == "null" else 3)  # JSON null is never retried

        async def awaited() -> None:
            async with client.to_async() as aclient:
                await aclient.generations.wait(GID, timeout=timeout)

        with pytest.raises(mediagen.UnexpectedResponseError):
            asyncio.run(awaited())


def test_a_submit_whose_answer_cannot_be_read_is_found_again_and_charged_once(
    sandbox, tenant, tmp_path
):
    relay = Relay(sandbox.base_url)
    forward = relay.respond

    def unreadable_submits(request):  # the service does the work; its answer is garbled
        answer = forward(request)
        return PORTAL if submits(request) else answer

    relay.respond = unreadable_submits
    request = example_request(sandbox, tenant, "pixel-1")
    try:
        with mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                             journal=tmp_path / "journal.jsonl") as client:  # fmt: skip
            with pytest.raises(mediagen.APIConnectionError, match="not JSON") as caught:
                client.images.create(**request)
            key = caught.value.idempotency_key
            assert key
            assert "recover()" in str(caught.value)
            assert len(reserves(sandbox, tenant.org_id)) == 1  # created and charged once

            lost = client.generations.pending()
            assert [(r["idempotency_key"], r["event"]) for r in lost] == [(key, "unanswered")]
            relay.respond = forward
            again = client.images.create(**request)  # the natural reaction: run it again
            assert again.idempotency_key == key
            assert [g.id for g in client.generations.list()] == [again.id]
            assert len(reserves(sandbox, tenant.org_id)) == 1  # the original job, back
            assert client.generations.recover() == []
    finally:
        relay.close()

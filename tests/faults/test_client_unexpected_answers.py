"""A 2xx answer the client cannot act on raises ``UnexpectedResponseError`` naming the endpoint
and what is wrong: no body or a list where an object belongs, a required field of the spec
missing, a generation id of ``""``, a status the spec does not name. ``wait()`` does not take
a missing or unknown status for "still pending" (it would poll forever). Fields the client does
not know are still accepted: the API is additive-only."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from client_faults import FakeServer, Reply

import mediagen

GID = "00000000-0000-4000-8000-0000000000e1"
GENERATION = {
    "id": GID,
    "type": "image",
    "status": "completed",
    "model": "pixel-1",
    "prompt": "a lighthouse",
    "created_at": "2026-01-01T00:00:00Z",
    "completed_at": "2026-01-01T00:00:02Z",
    "credits_charged": 1,
    "outputs": [],
}


class Service:
    """A loopback service answering each path with the body a test sets (JSON, status 200)."""

    def __init__(self) -> None:
        self.bodies: dict[str, object] = {}
        self.server = FakeServer(self.respond)

    def respond(self, request):
        path = request.path.split("?")[0]
        if path not in self.bodies:
            return Reply(404, {"Content-Type": "application/json"}, b'{"error": {}}')
        found = self.bodies[path]
        body = found if isinstance(found, bytes) else json.dumps(found).encode()
        return Reply(200, {"Content-Type": "application/json"}, body)

    def posted(self) -> int:
        return sum(1 for r in self.server.seen if r.method == "POST")


@pytest.fixture
def service():
    found = Service()
    yield found
    found.server.close()


@pytest.fixture
def client(service, tmp_path):
    made = mediagen.Client(api_key="mg-test-key", base_url=service.server.url,
                           cache_dir=tmp_path / "cache", journal=tmp_path / "journal.jsonl",
                           poll_interval=(0.02, 0.05), validate=False)  # fmt: skip
    yield made
    made.close()


def _bounded(call, seconds: float = 15):
    """``call()`` on a thread: (what it raised, whether it ended within ``seconds``)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome.get("error"), not thread.is_alive()


CREDITS_BODIES = {
    "empty object": ({}, "no 'balance'"),
    "a list": ([{"balance": 5}], "a JSON list, not an object"),
    "balance as text": ({"balance": "lots"}, "'balance' = 'lots', not a number"),
    "no body": (b"", "no body"),
    "a string": ("plenty", "a JSON string"),
}


@pytest.mark.parametrize("case", CREDITS_BODIES)
def test_credits_without_a_balance_are_an_unexpected_answer(case, service, client):
    body, said = CREDITS_BODIES[case]
    service.bodies["/v1/credits"] = body
    with pytest.raises(mediagen.UnexpectedResponseError) as caught:
        client.credits.get()
    assert "GET /v1/credits" in str(caught.value)
    assert said in str(caught.value)
    assert isinstance(caught.value, mediagen.MediagenError)


def _without(name: str) -> dict:
    return {k: v for k, v in GENERATION.items() if k != name}


GENERATION_BODIES = {
    "empty object": ({}, "'id', 'type', 'status', 'model', 'prompt', 'created_at'"),
    "no status": (_without("status"), "required 'status'"),
    "no created_at": (_without("created_at"), "required 'created_at'"),
    "empty id": ({**GENERATION, "id": ""}, "generation id ''"),
    "unknown status": ({**GENERATION, "status": "processing"}, "unknown status 'processing'"),
    "a list": ([GENERATION], "a JSON list"),
    "an output without url": (
        {**GENERATION, "outputs": [{"asset_id": "asset_1"}]},
        "output 0 of generation",
    ),
}


@pytest.mark.parametrize("case", GENERATION_BODIES)
def test_a_generation_without_its_required_fields_ends_wait_with_an_error(case, service, client):
    body, said = GENERATION_BODIES[case]
    service.bodies[f"/v1/generations/{GID}"] = body
    with pytest.raises(mediagen.UnexpectedResponseError, match="GET /v1/generations/"):
        client.generations.get(GID)
    error, ended = _bounded(lambda: client.generations.wait(GID))  # no timeout: must not hang
    assert ended, "wait() kept polling an answer that is not a generation"
    assert isinstance(error, mediagen.UnexpectedResponseError), error
    assert said in str(error)
    assert f"GET /v1/generations/{GID}" in str(error)


def test_the_async_wait_raises_too(service, tmp_path):
    service.bodies[f"/v1/generations/{GID}"] = {**GENERATION, "status": "queued"}

    async def main() -> None:
        async with mediagen.AsyncClient(api_key="mg-test-key", base_url=service.server.url,
                                        cache_dir=tmp_path, journal=False,
                                        poll_interval=(0.02, 0.05)) as aclient:  # fmt: skip
            await aclient.generations.wait(GID)

    error, ended = _bounded(lambda: asyncio.run(main()))
    assert ended
    assert isinstance(error, mediagen.UnexpectedResponseError), error
    assert "unknown status 'queued'" in str(error)


def test_fields_the_client_does_not_know_are_still_accepted(service, client):
    newer = {**GENERATION, "priority": "high", "region": {"name": "eu"}}
    service.bodies[f"/v1/generations/{GID}"] = newer
    service.bodies["/v1/credits"] = {"balance": 12.5, "currency": "credits", "tier": None}
    gen = client.generations.wait(GID)
    assert gen.completed
    assert gen.extra == {"priority": "high", "region": {"name": "eu"}}
    assert client.credits.get().balance == 12.5


def test_a_page_with_an_item_that_is_not_a_generation_is_an_error(service, client):
    service.bodies["/v1/generations"] = {"data": [GENERATION, {"id": "g2"}], "next_cursor": None}
    with pytest.raises(mediagen.UnexpectedResponseError, match="item 1 of the page"):
        list(client.generations.list())
    service.bodies["/v1/generations"] = [GENERATION]
    with pytest.raises(mediagen.UnexpectedResponseError, match=r"GET /v1/generations: .*list"):
        list(client.generations.list())


def test_a_submit_answered_with_an_empty_object_keeps_its_key_to_recover_the_job(service, client):
    service.bodies["/v1/images"] = {}
    with pytest.raises(mediagen.UnexpectedResponseError) as caught:
        client.images.create(model="pixel-1", prompt="a lighthouse")
    error = caught.value
    assert "POST /v1/images" in str(error)
    assert error.idempotency_key  # the job may exist: the same call again reuses this key
    assert "idempotency_key=" in str(error)
    assert client.generations.pending()[0]["idempotency_key"] == error.idempotency_key
    service.bodies["/v1/images"] = {**GENERATION, "status": "pending", "completed_at": None}
    again = client.images.create(model="pixel-1", prompt="a lighthouse")
    assert again.id == GID
    keys = [r.headers.get("Idempotency-Key") for r in service.server.seen if r.method == "POST"]
    assert keys == [error.idempotency_key, error.idempotency_key]


def test_a_quote_without_its_price_refuses_a_budgeted_submit(service, client):
    """A budget takes the quote's price: a quote without one would let the submit through."""
    service.bodies["/v1/models/pixel-1"] = {"id": "pixel-1", "type": "image"}
    service.bodies["/v1/models/pixel-1/estimate"] = {"allowed": True, "credits": 1}
    service.bodies["/v1/images"] = {**GENERATION, "status": "pending"}
    with mediagen.budget(5), pytest.raises(mediagen.UnexpectedResponseError) as caught:
        client.images.create(model="pixel-1", prompt="a lighthouse")
    assert "GET /v1/models/pixel-1/estimate" in str(caught.value)
    assert "'credits_after_discount'" in str(caught.value)
    assert service.posted() == 0


def test_the_error_pickles_with_its_endpoint(service, client):
    import pickle

    service.bodies["/v1/credits"] = []
    with pytest.raises(mediagen.UnexpectedResponseError) as caught:
        client.credits.get()
    back = pickle.loads(pickle.dumps(caught.value))  # noqa: S301
    assert (back.method, back.path, str(back)) == ("GET", "/v1/credits", str(caught.value))

"""A lost answer never leads to a second charge: the error says how to recover, the journal
knows the attempt, and running the same call again gets the original job back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from client_faults import Relay, example_request, reserves, submits

import mediagen


@pytest.fixture
def relay(sandbox):
    """The sandbox behind a relay that loses the answer of every submit (after forwarding)."""
    found = Relay(sandbox.base_url, drop=submits)
    yield found
    found.close()


@pytest.fixture
def client(relay, tenant, tmp_path):
    made = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                           journal=tmp_path / "journal.jsonl")  # fmt: skip
    yield made
    made.close()


def _posts(relay: Relay) -> int:
    return sum(1 for r in relay.seen if submits(r))


def test_running_the_same_call_again_after_lost_answers_charges_once(
    sandbox, tenant, relay, client
):
    request = example_request(sandbox, tenant, "pixel-1")
    with pytest.raises(mediagen.APIConnectionError) as first:
        client.images.create(**request)
    key = first.value.idempotency_key
    assert key
    assert key in str(first.value)
    assert "recover()" in str(first.value)
    assert _posts(relay) >= 2  # every retry reached the service; every answer was lost
    assert len(reserves(sandbox, tenant.org_id)) == 1  # the service did create and charge it

    lost = client.generations.pending()
    assert [r["idempotency_key"] for r in lost] == [key]
    assert lost[0]["event"] == "unanswered"

    # The natural reaction: run the cell again (still no answers) -- and again, answered.
    with pytest.raises(mediagen.APIConnectionError) as second:
        client.images.create(**request)
    assert second.value.idempotency_key == key
    relay.drop = lambda r: False
    gen = client.images.create(**request)
    assert gen.idempotency_key == key
    assert len(reserves(sandbox, tenant.org_id)) == 1
    assert [g.id for g in client.generations.list()] == [gen.id]
    assert all(r.get("generation_id") == gen.id for r in client.generations.pending())

    # Once answered, the same request sent again on purpose is a new job.
    again = client.images.create(**request)
    assert again.id != gen.id
    assert len(reserves(sandbox, tenant.org_id)) == 2


def test_recover_finds_the_lost_job_without_submitting(sandbox, tenant, relay, client):
    request = example_request(sandbox, tenant, "pixel-1")
    with pytest.raises(mediagen.APIConnectionError) as caught:
        client.images.create(**request)
    relay.drop = lambda r: False
    posts = _posts(relay)
    found = client.generations.recover()
    assert [g.idempotency_key for g in found] == [caught.value.idempotency_key]
    assert _posts(relay) == posts  # looked up, not sent again
    assert not [r for r in client.generations.pending() if r.get("event") == "unanswered"]
    resumed = client.generations.resume(wait=True)
    assert [g.id for g in resumed] in ([found[0].id], [])  # journaled; finished ones drop off
    assert len(reserves(sandbox, tenant.org_id)) == 1


def test_resume_re_attaches_to_a_job_whose_answer_was_lost(sandbox, tenant, relay, client):
    request = example_request(sandbox, tenant, "pixel-1")
    request["prompt"] += " [[slow:2]]"
    with pytest.raises(mediagen.APIConnectionError):
        client.images.create(**request)
    relay.drop = lambda r: False
    resumed = client.generations.resume(wait=True, download=False)
    assert len(resumed) == 1
    assert resumed[0].status == "completed"
    assert len(reserves(sandbox, tenant.org_id)) == 1


def test_an_own_key_or_another_body_is_not_redirected(sandbox, tenant, relay, client):
    request = example_request(sandbox, tenant, "pixel-1")
    with pytest.raises(mediagen.APIConnectionError) as caught:
        client.images.create(**request)
    lost_key = caught.value.idempotency_key
    relay.drop = lambda r: False
    other = client.images.create(**{**request, "prompt": request["prompt"] + ", at night"})
    assert other.idempotency_key != lost_key
    mine = client.images.create(**request, idempotency_key="my-own-key-1")
    assert mine.idempotency_key == "my-own-key-1"
    # the lost one is still there to be claimed by the identical request
    assert [r["idempotency_key"] for r in client.generations.pending()
            if r.get("event") == "unanswered"] == [lost_key]  # fmt: skip
    assert len(reserves(sandbox, tenant.org_id)) == 3


def test_a_5xx_on_a_submit_is_an_unknown_outcome_too(sandbox, tenant, relay, client):
    from client_faults import Reply

    forward = relay.respond

    def gateway_timeout(request):
        answer = forward(request)  # the service did the work ...
        return (
            Reply(504, {"Content-Type": "text/plain"}, b"gateway timeout")
            if submits(request)
            else answer
        )  # ... and the proxy lost it

    relay.respond = gateway_timeout
    request = example_request(sandbox, tenant, "pixel-1")
    with pytest.raises(mediagen.ServerError) as caught:
        client.images.create(**request)
    assert caught.value.idempotency_key in str(caught.value)
    relay.respond = forward
    relay.drop = lambda r: False
    gen = client.images.create(**request)
    assert gen.idempotency_key == caught.value.idempotency_key
    assert len(reserves(sandbox, tenant.org_id)) == 1


def test_a_batch_run_again_after_lost_answers_charges_each_item_once(
    sandbox, tenant, relay, client
):
    request = example_request(sandbox, tenant, "pixel-1")
    requests = [request, {**request, "prompt": request["prompt"] + ", in fog"}]
    first = client.submit_batch(requests, show_estimate=False)
    assert all(item.error is not None for item in first)
    keys = [item.idempotency_key for item in first]
    assert all(key in str(item.error) for key, item in zip(keys, first, strict=True))
    relay.drop = lambda r: False
    again = client.submit_batch(requests, show_estimate=False)
    assert all(item.ok for item in again)
    assert [item.generation.idempotency_key for item in again] == keys
    assert len(reserves(sandbox, tenant.org_id)) == 2


def test_a_request_with_a_local_file_is_recognized_when_sent_again(
    sandbox, tenant, relay, client, tmp_path
):
    """Its upload gets a new asset id each time, so the bodies as sent differ: the request is
    recognized as given (the file by path, size and time), sent as it was, and not uploaded
    again."""
    from PIL import Image

    image = tmp_path / "ref.png"
    Image.new("RGB", (64, 48), (200, 90, 40)).save(image)
    request = {**example_request(sandbox, tenant, "pixel-1"), "reference_images": [str(image)]}
    with pytest.raises(mediagen.APIConnectionError) as caught:
        client.images.create(**request)
    relay.drop = lambda r: False
    gen = client.images.create(**request)
    assert gen.idempotency_key == caught.value.idempotency_key
    assert len(reserves(sandbox, tenant.org_id)) == 1
    uploads = [r for r in relay.seen if r.method == "POST" and r.path == "/v1/uploads"]
    assert len(uploads) == 1


KILLED_SUBMITTER = """
import json, os, sys
import mediagen
client = mediagen.Client(api_key=os.environ["MEDIAGEN_API_KEY"], base_url=sys.argv[1],
                         cache_dir=sys.argv[2])
client.images.create(**json.loads(sys.argv[3]))
"""


def test_a_submit_killed_before_its_answer_is_charged_once_when_sent_again(
    sandbox, tenant, relay, client, tmp_path
):
    """A kernel killed mid-submit writes nothing more: its attempt is recognized as lost
    because its process is gone."""
    request = example_request(sandbox, tenant, "pixel-1")
    args = [relay.url, str(tmp_path), json.dumps(request)]  # the same journal as ``client``
    process = subprocess.Popen([sys.executable, "-c", KILLED_SUBMITTER, *args],
                               env={**os.environ, "MEDIAGEN_API_KEY": tenant.api_key})  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while relay.dropped == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert relay.dropped  # the service made the job; the answer was lost
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    relay.drop = lambda r: False
    assert [r.get("event") for r in client.generations.pending()] == ["unanswered"]
    client.images.create(**request)
    assert len(reserves(sandbox, tenant.org_id)) == 1


def test_a_budget_counts_a_job_whose_answer_was_lost_once(sandbox, tenant, relay, tmp_path):
    client = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                             budget=500)  # fmt: skip
    request = example_request(sandbox, tenant, "pixel-1")
    try:
        with pytest.raises(mediagen.APIConnectionError):
            client.images.create(**request)
        price = client.budget.spent
        assert price > 0  # the job may exist: its share stays counted
        relay.drop = lambda r: False
        gen = client.images.create(**request)
    finally:
        client.close()
    assert client.budget.spent == price  # one job, counted once
    assert len(reserves(sandbox, tenant.org_id)) == 1
    assert gen.idempotency_key


def test_a_lost_attempt_that_never_arrived_is_looked_for_once(sandbox, tenant, relay, client):
    """An attempt lost before it reached the service (hours ago): recover() finds nothing,
    says so in the journal, and does not list the history for it again."""
    import datetime as dt

    from mediagen.local._journal import make_record

    record = make_record("attempt", service=client.base_url,
                         key_id=client._config.key_fingerprint, kind="image",
                         request={"model": "pixel-1", "prompt": "never arrived"},
                         idempotency_key="mg-never-arrived")  # fmt: skip
    hours_ago = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=3)
    record["at"] = hours_ago.isoformat().replace("+00:00", "Z")
    client.journal.append(record)
    client.journal.append({**record, "event": "unanswered", "pid": None, "host": None})
    assert [r["idempotency_key"] for r in client.generations.pending()] == ["mg-never-arrived"]
    assert client.generations.recover() == []
    assert client.generations.pending() == []
    lists = len([r for r in relay.seen if r.path.startswith("/v1/generations?")])
    assert lists >= 1  # it was looked for
    assert client.generations.recover() == []
    assert len([r for r in relay.seen if r.path.startswith("/v1/generations?")]) == lists


def _other_spelling(base_url: str) -> str:
    """The same sandbox under another URL: ``localhost`` for ``127.0.0.1``, a trailing ``/``."""
    port = base_url.rsplit(":", 1)[1]
    return f"http://localhost:{port}/"


def test_a_lost_answer_is_recovered_through_another_url_of_the_same_service(
    sandbox, tenant, relay, client, tmp_path
):
    """Lost through a relay (a proxy), sent again directly under another spelling of the
    sandbox's URL: the journal knows the attempt by the key and the request, not the URL."""
    request = example_request(sandbox, tenant, "pixel-1")
    with pytest.raises(mediagen.APIConnectionError) as lost:
        client.images.create(**request)
    assert len(reserves(sandbox, tenant.org_id)) == 1  # the service made (and charged) it
    direct = mediagen.Client(api_key=tenant.api_key, base_url=_other_spelling(sandbox.base_url),
                             cache_dir=tmp_path, journal=tmp_path / "journal.jsonl")  # fmt: skip
    try:
        assert direct.base_url != client.base_url
        assert [r["idempotency_key"] for r in direct.generations.pending()] == [
            lost.value.idempotency_key
        ]
        gen = direct.images.create(**request)
    finally:
        direct.close()
    assert gen.idempotency_key == lost.value.idempotency_key
    assert len(reserves(sandbox, tenant.org_id)) == 1  # charged once
    assert _posts(relay) >= 1


def test_another_key_through_another_url_does_not_take_over_a_lost_attempt(
    sandbox, tenant, tenant_factory, relay, client, tmp_path
):
    request = example_request(sandbox, tenant, "pixel-1")
    with pytest.raises(mediagen.APIConnectionError) as lost:
        client.images.create(**request)
    other = tenant_factory()
    stranger = mediagen.Client(api_key=other.api_key, base_url=_other_spelling(sandbox.base_url),
                               cache_dir=tmp_path, journal=tmp_path / "journal.jsonl")  # fmt: skip
    try:
        assert stranger.generations.pending() == []
        gen = stranger.images.create(**request)
    finally:
        stranger.close()
    assert gen.idempotency_key != lost.value.idempotency_key
    assert len(reserves(sandbox, other.org_id)) == 1
    assert len(reserves(sandbox, tenant.org_id)) == 1


@pytest.mark.parametrize("own_key", [None, "caller-key-1"], ids=["client key", "caller key"])
def test_resend_gets_the_lost_job_back_after_a_restart_and_charges_once(
    sandbox, tenant, relay, client, tmp_path, own_key
):
    """Whoever made the key (the client, or the caller), a submit whose answer was lost is
    sent again by that key from a new client over the same journal (a kernel restart)."""
    request = example_request(sandbox, tenant, "pixel-1")
    extra = {"idempotency_key": own_key} if own_key else {}
    with pytest.raises(mediagen.APIConnectionError) as caught:
        client.images.create(**request, **extra)
    key = caught.value.idempotency_key
    assert key == (own_key or key)
    assert f"client.generations.resend({key!r})" in str(caught.value)
    assert len(reserves(sandbox, tenant.org_id)) == 1  # made and charged; the answer was lost
    relay.drop = lambda r: False
    restarted = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                                journal=tmp_path / "journal.jsonl")  # fmt: skip
    posts = _posts(relay)
    gen = restarted.generations.resend(key)
    assert gen.idempotency_key == key
    assert _posts(relay) == posts + 1
    assert len(reserves(sandbox, tenant.org_id)) == 1  # the same job: charged once
    assert [g.id for g in restarted.generations.list()] == [gen.id]
    assert not [r for r in restarted.generations.pending() if r.get("event") == "unanswered"]
    with pytest.raises(LookupError, match=key):  # answered now: nothing waits under that key
        restarted.generations.resend(key)
    restarted.close()


def test_resend_of_a_key_nothing_waits_under_names_the_key_and_sends_nothing(
    sandbox, tenant, relay, client, tmp_path
):
    posts = _posts(relay)
    with pytest.raises(LookupError, match=r"'never-sent'.*pending"):
        client.generations.resend("never-sent")
    off = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                          journal=False)  # fmt: skip
    with pytest.raises(LookupError, match="the journal is off"):
        off.generations.resend("never-sent")
    off.close()
    assert _posts(relay) == posts
    assert reserves(sandbox, tenant.org_id) == []


def test_the_async_client_resends_a_lost_submit_charged_once(sandbox, tenant, relay, tmp_path):
    import asyncio

    request = example_request(sandbox, tenant, "pixel-1")

    async def main() -> tuple[str, str | None]:
        async with mediagen.AsyncClient(api_key=tenant.api_key, base_url=relay.url,
                                        cache_dir=tmp_path,
                                        journal=tmp_path / "journal.jsonl") as aclient:  # fmt: skip
            try:
                await aclient.images.create(**request)
            except mediagen.APIConnectionError as lost:
                key = lost.idempotency_key
            relay.drop = lambda r: False
            gen = await aclient.generations.resend(key)
            return key, gen.idempotency_key

    key, resent = asyncio.run(main())
    assert resent == key
    assert len(reserves(sandbox, tenant.org_id)) == 1

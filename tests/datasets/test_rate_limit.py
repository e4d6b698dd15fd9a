"""A table run on a key whose rate limit it does not know: it learns the limit from the 429s,
finishes every row, and pays for each once (the real sandbox, over loopback)."""

from __future__ import annotations

from collections import Counter

import httpx
import pandas as pd

from mediagen.datasets import plan


def test_a_429_storm_never_fails_a_row_and_never_charges_twice(make_client, sandbox, tenant,
                                                               charges, capsys):  # fmt: skip
    answers: Counter[int] = Counter()

    def count(response: httpx.Response) -> None:
        if response.request.url.path.startswith("/v1/"):
            answers[response.status_code] += 1

    http = httpx.Client(timeout=60, event_hooks={"response": [count]})
    client = make_client(http_client=http)  # max_retries: the default 3
    frame = pd.DataFrame({"caption": [f"a paper boat, number {i}" for i in range(48)]})
    made = plan(frame, client, model="pixel-1", prompt="{caption}", run_id="storm")
    with sandbox.admin.key_rate_limited(tenant.key_id, 8, burst=2):
        out = made.run(concurrency=8)
    http.close()
    assert answers[429] > 0, "the limit was never met: this test proves nothing"
    assert (out["status"] == "completed").all(), out["error_message"].dropna().tolist()
    _, count = charges(tenant)
    assert len(count) == 48
    assert set(count.values()) == {1}  # each generation charged once
    assert answers[429] <= 0.25 * sum(answers.values())  # learned, not hammered
    # the progress says the run is held to the key's limit, not stuck
    shown = capsys.readouterr().err
    assert "req/s held" in shown, shown
    assert "× 429" in shown, shown
    status = client.rate_status()
    assert status.limited == answers[429]
    assert status.pace is not None
    assert 0 < status.pace < 16


def test_rows_the_limit_holds_past_their_deadline_wait_their_turn_and_are_paid_once(
    make_client, sandbox, tenant, charges
):
    """A limit slower than a call's deadline allows for its queue (a key shared by many
    workers): the rows it holds or refuses that long were made by nobody, so they wait again
    instead of failing, and nothing is charged twice."""
    client = make_client(timeout=1.5)
    frame = pd.DataFrame({"caption": [f"a slow kite, number {i}" for i in range(8)]})
    made = plan(frame, client, model="pixel-1", prompt="{caption}", run_id="held")
    with sandbox.admin.key_rate_limited(tenant.key_id, 2, burst=1):
        out = made.run(concurrency=8, progress=False)
    assert (out["status"] == "completed").all(), out["error"].dropna().tolist()
    _, count = charges(tenant)
    assert len(count) == 8
    assert set(count.values()) == {1}


def test_a_submit_the_limit_held_past_its_deadline_says_nothing_was_made(
    make_client, sandbox, tenant, charges
):
    import pytest

    from mediagen import APITimeoutError

    client = make_client(timeout=1.5)
    client.models.get("pixel-1")  # what the submit looks up first, before the limit
    with sandbox.admin.key_rate_limited(tenant.key_id, 0.05, burst=1):
        client.credits.get()  # the bucket's one request; the next 429 says wait some 20 s
        with pytest.raises(APITimeoutError):
            client.credits.get()
        with pytest.raises(APITimeoutError) as caught:
            client.images.create(model="pixel-1", prompt="a held kite", estimate=False)
    assert caught.value.held_by_limit
    message = str(caught.value)
    assert "rate limit held it" in message, message
    assert "made and charged nothing" in message, message
    assert "may have created" not in message  # no recovery to do
    assert charges(tenant)[1] == {}

"""Cost guards against the real sandbox: budgets refuse before sending; batches answer per item."""

from __future__ import annotations

import pytest
from client_helpers import Recorder, example

import mediagen


def test_a_client_budget_refuses_before_sending(sandbox, tenant, make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder, budget=10)
    request = example(catalog, "vidra-2", "text_to_video")  # costs more than 10
    with pytest.raises(mediagen.BudgetExceededError) as caught:
        client.videos.create(**request)
    assert caught.value.needed > 10
    assert caught.value.remaining == 10
    assert recorder.count("POST") == 0
    assert sandbox.admin.ledger(tenant.org_id)["entries"][-1]["kind"] == "grant"
    cheap = client.images.create(**example(catalog, "pixel-1"))
    assert cheap.status == "pending"
    assert client.budget.spent == 1.0


def test_a_budget_context_counts_every_submit_inside_it(make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    request = example(catalog, "pixel-1")  # 1 credit each
    with mediagen.budget(2) as budget:
        client.images.create(**request)
        client.images.create(**request)
        with pytest.raises(mediagen.BudgetExceededError):
            client.images.create(**request)
    assert budget.spent == 2
    assert budget.remaining == 0
    assert recorder.count("POST", "/v1/images") == 2
    client.images.create(**request)  # outside the block: no limit


def test_a_batch_shows_its_total_then_returns_one_result_per_item(
    sandbox, tenant, client, catalog, capsys
):
    good = example(catalog, "pixel-1")
    bad = {**example(catalog, "vidra-2", "text_to_video"), "tier": "8k"}
    song = example(catalog, "tunesmith")
    quotes = [client.models.estimate_request(r) for r in (good, song)]
    result = client.submit_batch([good, bad, song, good], concurrency=2)
    assert [item.index for item in result] == [0, 1, 2, 3]
    assert [item.ok for item in result] == [True, False, True, True]
    assert isinstance(result[1].error, mediagen.ValidationError)
    assert result[2].generation.type == "audio"
    expected = round(2 * quotes[0].credits_after_discount + quotes[1].credits_after_discount, 2)
    assert result.total_estimate == expected
    assert f"{expected:g} credits" in capsys.readouterr().out
    assert len({item.generation.id for item in result if item.ok}) == 3
    again = client.submit_batch(
        [{**item.request, "idempotency_key": item.idempotency_key} for item in result if item.ok],
        show_estimate=False,
    )
    assert [i.generation.id for i in again] == [i.generation.id for i in result if i.ok]
    reserves = [e for e in sandbox.admin.ledger(tenant.org_id)["entries"] if e["kind"] == "reserve"]
    assert len(reserves) == 3  # the repeat charged nothing


def test_a_batch_over_its_limit_or_cancelled_sends_nothing(make_client, catalog):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    requests = [example(catalog, "pixel-1")] * 3
    with pytest.raises(mediagen.BudgetExceededError):
        client.submit_batch(requests, max_credits=2, show_estimate=False)
    cancelled = client.submit_batch(requests, on_estimate=lambda total, items: False)
    assert all(not item.ok for item in cancelled)
    assert cancelled.total_estimate == 3
    assert recorder.count("POST") == 0


def test_a_batch_respects_its_concurrency(make_client, catalog):
    import threading

    active = 0
    most = 0
    lock = threading.Lock()

    def on_request(request):
        nonlocal active, most
        if request.method == "POST":
            with lock:
                active += 1
                most = max(most, active)

    def on_response(response):
        nonlocal active
        if response.request.method == "POST":
            with lock:
                active -= 1

    import httpx

    http = httpx.Client(event_hooks={"request": [on_request], "response": [on_response]})
    client = make_client(http_client=http)
    request = example(catalog, "pixel-1")
    result = client.submit_batch(
        [{**request, "prompt": f"{n}"} for n in range(8)], concurrency=3, show_estimate=False
    )
    http.close()
    assert all(item.ok for item in result)
    assert 1 <= most <= 3

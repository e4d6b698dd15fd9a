"""A quote below 0 credits (from a service out of step, or a proxy) never opens a budget: it
is an answer the client cannot act on, and nothing is sent."""

from __future__ import annotations

import json

import pytest
from client_faults import Relay, Reply, example_request

import mediagen


def test_a_negative_quote_cannot_open_a_budget(sandbox, tenant, tmp_path):
    """A service (or a proxy) that quotes -100 credits: the quote is refused as an answer the
    client cannot act on, the submit is not sent, and later submits are still measured."""
    relay = Relay(sandbox.base_url)
    forward = relay.respond

    def negative_quotes(request):
        answer = forward(request)
        if request.method == "GET" and "/estimate" in request.path and answer is not None:
            quote = json.loads(answer.body)
            quote.update(credits=-100, credits_after_discount=-100)
            return Reply(answer.status, {"Content-Type": "application/json"},
                         json.dumps(quote).encode())  # fmt: skip
        return answer

    relay.respond = negative_quotes
    request = example_request(sandbox, tenant, "pixel-pro")
    try:
        with mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                             journal=False, budget=0.1) as client:  # fmt: skip
            for _ in range(2):
                with pytest.raises(mediagen.UnexpectedResponseError, match="below 0 credits"):
                    client.images.create(**request)
            assert client._budget.spent == 0
        assert not [r for r in relay.seen if r.method == "POST" and r.path == "/v1/images"]
    finally:
        relay.close()

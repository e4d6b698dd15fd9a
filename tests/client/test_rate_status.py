"""``client.rate_status()``: what a long run shows of the key's rate limit (the real sandbox)."""

from __future__ import annotations

import mediagen


def test_a_fresh_key_is_not_held_and_says_nothing(client):
    status = client.rate_status()
    assert status == mediagen.RateStatus(pace=None, limited=0, held_for=0.0)
    assert status.describe() == ""


def test_a_given_rate_limit_is_the_pace_held(make_client):
    client = make_client(rate_limit=5)
    assert client.rate_status().pace == 5
    assert client.rate_status().describe() == "5 req/s held"


def test_429s_are_counted_and_the_pace_is_learned(make_client, sandbox, tenant):
    client = make_client()
    with sandbox.admin.key_rate_limited(tenant.key_id, 2, burst=1):
        for _ in range(6):
            client.credits.get()
    status = client.rate_status()
    assert status.limited >= 1, "the limit was never met: this test proves nothing"
    assert status.pace is not None
    assert status.pace < 6
    assert f"{status.limited} × 429" in status.describe()
    assert "req/s held" in status.describe()

"""The credit meter shows what is left of the spend limits the user set on the client."""

from __future__ import annotations

from widget_loop import run, until

import mediagen
from mediagen.widgets import CreditMeter


def test_the_meter_shows_a_rolling_limit_and_follows_spending(make_client, tenant, tmp_path):
    limit = mediagen.SpendLimit(daily=10, weekly=30, path=tmp_path / "limit.jsonl")
    client = make_client(tenant, budget=limit)
    meter = CreditMeter(client)

    async def scenario():
        await meter.refresh()
        assert meter.limits == [
            {"name": "Daily limit", "spent": 0, "limit": 10.0},
            {"name": "Weekly limit", "spent": 0, "limit": 30.0},
        ]
        gen = client.images.create(model="pixel-1", prompt="a lighthouse")  # 1 credit
        done = client.generations.wait(gen, timeout=60, download=False)
        await meter.generation_finished(done)
        await until(lambda: meter.limits and meter.limits[0]["spent"] == 1)

    run(scenario())
    assert [(x["spent"], x["limit"]) for x in meter.limits] == [(1, 10.0), (1, 30.0)]


def test_no_limit_no_rows(make_client, tenant):
    meter = CreditMeter(make_client(tenant))
    run(meter.refresh())
    assert meter.limits == []

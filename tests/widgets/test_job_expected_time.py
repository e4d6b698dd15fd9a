"""A pending job card knows how long its model usually takes for this user (the journal)."""

from __future__ import annotations

from widget_loop import run

from mediagen.widgets import JobCard
from mediagen.widgets._loop_client import aclose


def test_a_pending_card_carries_the_models_usual_time_from_the_users_history(make_client, tenant):
    client = make_client(tenant)
    for _ in range(2):
        client.images.create(model="pixel-1", prompt="a kite [[slow:0.2]]").wait()

    async def scenario():
        known = JobCard(client, client.images.create(model="pixel-1", prompt="a [[slow:0.3]]"))
        new = JobCard(client, client.images.create(model="pixel-pro", prompt="b [[slow:0.3]]"))
        pending = (known.status, new.status)
        await known.task
        await new.task
        await aclose(client)
        return known, new, pending

    known, new, pending = run(scenario())
    assert pending == ("pending", "pending")
    assert known.expected_s is not None
    assert 0.2 <= known.expected_s < 10
    assert new.expected_s is None, "no history for this model: no guess"
    assert known.status == "completed"


def test_a_card_expects_the_time_the_users_stored_history_says(make_client, tenant, tmp_path):
    # Five images made with this key on another machine (a cache and journal of its own).
    laptop = make_client(tenant, cache_dir=tmp_path / "laptop")
    for i in range(5):
        laptop.images.create(model="pixel-1", prompt=f"kite {i} [[slow:0.2]]").wait()
    client = make_client(tenant, cache_dir=tmp_path / "here")
    client.generations.to_dataframe()  # this machine's history store, synced
    assert client.journal.latest() == {}, "nothing of it in this machine's journal"

    async def scenario():
        card = JobCard(client, client.images.create(model="pixel-1", prompt="a"))
        await card.task
        await aclose(client)
        return card

    card = run(scenario())
    assert card.expected_s is not None
    assert 0.2 <= card.expected_s < 10

"""A rolling spend limit refuses, before sending, what would take a day's or a week's spend
over its limit; it survives a restart (a new kernel reads the same file) and its window slides."""

from __future__ import annotations

import pytest

import mediagen


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def make(sandbox, tenant, tmp_path):
    clients = []

    def client(limit: mediagen.SpendLimit) -> mediagen.Client:
        made = mediagen.Client(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path, budget=limit
        )
        clients.append(made)
        return made

    yield client
    for made in clients:
        made.close()


def _generations(client) -> int:
    return sum(1 for _ in client.generations.list())


def test_the_daily_limit_refuses_before_sending_and_survives_a_restart(make, tmp_path):
    clock = Clock()
    path = tmp_path / "limit.jsonl"
    body = {"model": "pixel-1", "prompt": "a lighthouse"}  # 1 credit each
    client = make(mediagen.SpendLimit(daily=3, path=path, clock=clock))
    for _ in range(3):
        client.images.create(**body)
    with pytest.raises(mediagen.SpendLimitExceededError, match="daily limit of 3") as refused:
        client.images.create(**body)
    assert refused.value.remaining == 0
    assert _generations(client) == 3  # nothing was sent

    # A new kernel: the same file, the same limit.
    again = make(mediagen.SpendLimit(daily=3, path=path, clock=clock))
    with pytest.raises(mediagen.SpendLimitExceededError):
        again.images.create(**body)

    clock.now += 86_400 + 1  # a day later the window has slid past those three
    again.images.create(**body)
    assert _generations(again) == 4


def test_the_weekly_limit_holds_when_the_day_has_passed(make, tmp_path):
    clock = Clock()
    limit = mediagen.SpendLimit(daily=2, weekly=3, path=tmp_path / "w.jsonl", clock=clock)
    client = make(limit)
    body = {"model": "pixel-1", "prompt": "dusk"}
    client.images.create(**body)
    client.images.create(**body)
    clock.now += 86_400 + 1
    client.images.create(**body)
    with pytest.raises(mediagen.SpendLimitExceededError, match="weekly limit of 3"):
        client.images.create(**body)
    assert limit.spent_in("weekly") == 3
    assert "weekly: 3 of 3" in repr(limit)


def test_a_refusal_by_the_service_gives_the_reservation_back(make, tmp_path, sandbox, tenant):
    limit = mediagen.SpendLimit(daily=5, path=tmp_path / "r.jsonl")
    client = make(limit)
    sandbox.admin.set_balance(tenant.org_id, 0)
    with pytest.raises(mediagen.PaymentRequiredError):
        client.images.create(model="pixel-1", prompt="no credits")
    assert limit.spent_in("daily") == 0


def test_a_limit_needs_a_window():
    with pytest.raises(ValueError, match="daily"):
        mediagen.SpendLimit()

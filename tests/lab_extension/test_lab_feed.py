"""The server extension's poller against the real sandbox: one poller however many pages
subscribe, none once they leave, running jobs polled 2 s backing off to 5 s, and a 429's
Retry-After waited out before the next request."""

from __future__ import annotations

import asyncio
import itertools
import time

import httpx
import pytest

from mediagen import AsyncClient, Client
from mediagen.jupyter_server._feed import Feed


@pytest.fixture
def keyed(monkeypatch, sandbox, tenant):
    """The tenant's key in the environment, as `mediagen lab` gives it to JupyterLab."""
    monkeypatch.setenv("MEDIAGEN_API_KEY", tenant.api_key)
    monkeypatch.setenv("MEDIAGEN_BASE_URL", sandbox.base_url)
    return tenant


def make_feed(sandbox, tenant, hooks=(), **options) -> Feed:
    def factory(http: httpx.AsyncClient) -> AsyncClient:
        http.event_hooks["response"].extend(hooks)
        return AsyncClient(
            api_key=tenant.api_key, base_url=sandbox.base_url, http_client=http, journal=False
        )

    return Feed(factory, **options)


def gets_of(feed: Feed, generation_id: str) -> list[float]:
    return [t for t, m, p in feed.request_log if p == f"/v1/generations/{generation_id}"]


def test_a_running_job_is_polled_every_2_s_backing_off_to_5_s(sandbox, keyed):
    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, journal=False)
    gen = client.images.create(model="pixel-pro", prompt="a slow kite [[slow:17]]", quality="low")

    async def main() -> Feed:
        feed = make_feed(sandbox, keyed, list_interval=30.0)
        feed.subscribe("page")
        deadline = time.monotonic() + 40
        while feed.generations.get(gen.id) is None or feed.generations[gen.id].status == "pending":
            assert time.monotonic() < deadline, "the job never settled in the feed"
            feed.subscribe("page")
            await asyncio.sleep(0.2)
        await feed.stop()
        return feed

    feed = asyncio.run(main())
    (listed,) = [t for t, _, p in feed.request_log if p == "/v1/generations"]  # found it
    polls = [listed, *gets_of(feed, gen.id)]
    gaps = [b - a for a, b in itertools.pairwise(polls)]
    assert len(gaps) >= 4, gaps
    assert 1.8 <= gaps[0] <= 2.6, gaps  # 2 s at first
    assert all(b >= a - 0.3 for a, b in itertools.pairwise(gaps)), gaps  # never faster again
    assert 4.7 <= max(gaps) <= 5.6, gaps  # capped at 5 s
    assert feed.generations[gen.id].status == "completed"


def test_retry_after_is_waited_out_before_the_next_request(sandbox, keyed):
    seen: list[tuple[float, int, str | None]] = []

    async def record(response: httpx.Response) -> None:
        seen.append((time.monotonic(), response.status_code, response.headers.get("Retry-After")))

    async def main() -> Feed:
        feed = make_feed(sandbox, keyed, [record], list_interval=0.2, credits_interval=0.2)
        feed.subscribe("page")
        await asyncio.sleep(8)
        await feed.stop()
        return feed

    with sandbox.admin.config_changed(rate_limit_per_second=0.5, rate_limit_burst=2):
        feed = asyncio.run(main())
    limited = [(t, float(after)) for t, status, after in seen if status == 429 and after]
    assert limited, f"the sandbox never said 429: {[s for _, s, _ in seen]}"
    sent = [t for t, _, _ in feed.request_log]
    for when, after in limited:
        following = [t for t in sent if t > when]
        if following:
            assert following[0] >= when + after - 0.05, (when, after, following[0] - when)


def test_one_poller_for_many_subscribers_and_none_once_they_leave(sandbox, keyed):
    async def main() -> None:
        feed = make_feed(sandbox, keyed)
        for page in ("tab-1", "tab-2", "tab-3"):
            feed.subscribe(page)
        await asyncio.sleep(2.5)
        assert feed.running
        assert feed.pollers_started == 1
        assert feed.live_subscribers() == 3
        assert feed.credits is not None
        assert feed.credits["balance"] == 1000
        for page in ("tab-1", "tab-2", "tab-3"):
            feed.unsubscribe(page)
        await asyncio.sleep(1.5)
        assert not feed.running
        quiet = feed.requests_sent
        await asyncio.sleep(2.5)
        assert feed.requests_sent == quiet  # nothing sent with nobody watching
        feed.subscribe("tab-4")
        await asyncio.sleep(0.5)
        assert feed.running
        assert feed.pollers_started == 2
        await feed.stop()

    asyncio.run(main())


def test_a_page_that_stops_asking_is_forgotten_after_its_lease(sandbox, keyed):
    async def main() -> None:
        feed = make_feed(sandbox, keyed, lease=1.0)
        feed.subscribe("tab-gone")
        await asyncio.sleep(0.3)
        assert feed.running
        await asyncio.sleep(2.5)
        assert not feed.running
        assert feed.live_subscribers() == 0

    asyncio.run(main())


def test_without_a_key_nothing_starts(monkeypatch, sandbox, tenant):
    monkeypatch.delenv("MEDIAGEN_API_KEY", raising=False)

    async def main() -> None:
        feed = make_feed(sandbox, tenant)
        feed.subscribe("page")
        await asyncio.sleep(0.3)
        assert not feed.running
        assert feed.pollers_started == 0
        assert feed.snapshot()["configured"] is False

    asyncio.run(main())


def test_the_status_figures_are_the_balance_todays_spend_and_the_spend_limits_rest(
    monkeypatch, tmp_path, sandbox, keyed
):
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MEDIAGEN_SPEND_LIMIT_DAILY", "100")
    from mediagen import SpendLimit

    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, budget=SpendLimit(daily=100))
    client.images.create(model="pixel-pro", prompt="a limited kite", quality="low").wait()

    async def main() -> Feed:
        feed = make_feed(sandbox, keyed)
        feed.subscribe("page")
        await asyncio.sleep(1.0)
        await feed.stop()
        return feed

    feed = asyncio.run(main())
    assert feed.credits == {
        "balance": client.credits.get().balance,
        "spent_today": 0.5,
        "limit_remaining": 99.5,
        "member_limit_remaining": None,
    }

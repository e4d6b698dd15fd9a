"""The server extension's poller against the real sandbox: one poller however many pages
subscribe, none once they leave, running jobs polled 2 s backing off to 5 s, and a 429's
Retry-After waited out before the next request.

The poller's intervals, leases and pauses are on a virtual clock the tests move on
(:func:`advance`): it waits for every request the poller sends at each of its wake-ups, so what
it sends is what it would send in real time, and the times it logs are exact. Only what the
sandbox does in real time takes real time (a ``[[slow:N]]`` job, its rate limiter).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import math
import time

import httpx
import pytest

from mediagen import AsyncClient, Client
from mediagen.jupyter_server._feed import Feed, RealClock
from mediagen.jupyter_server._rows import start_of_today

#: what the sandbox does in real time (a [[slow:N]] job, a Retry-After): some 15 s in all
pytestmark = pytest.mark.slow


class VirtualClock:
    """The poller's time, which only :func:`advance` moves: ``sleep()`` parks until then."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        sleeper = (self.now + max(0.0, seconds), next(self._order),
                   asyncio.get_running_loop().create_future())  # fmt: skip
        self.sleepers.append(sleeper)
        try:
            await sleeper[2]
        finally:
            if sleeper in self.sleepers:  # cancelled (the feed stopped)
                self.sleepers.remove(sleeper)

    def wake_due(self) -> None:
        for sleeper in sorted(s for s in self.sleepers if s[0] <= self.now):
            self.sleepers.remove(sleeper)
            if not sleeper[2].done():
                sleeper[2].set_result(None)


async def parked(feed: Feed) -> None:
    """Until the poller waits on its clock again (or has ended): whatever it sends at a wake-up
    (real requests to the sandbox) is answered by then."""
    give_up = time.monotonic() + 60
    while feed.running and not feed.clock.sleepers:
        assert time.monotonic() < give_up, "the poller never went back to sleep"
        await asyncio.sleep(0.002)


async def advance(feed: Feed, seconds: float) -> None:
    """Move the feed's virtual clock on by ``seconds``: the poller wakes at each of its wake-ups
    on the way, as it would in real time, and is asleep again (or ended) on return."""
    clock = feed.clock
    end = clock.now + seconds
    while True:
        await parked(feed)
        due = min((when for when, *_ in clock.sleepers), default=math.inf)
        if due > end:
            break
        clock.now = max(clock.now, due)
        clock.wake_due()
    clock.now = end


@pytest.fixture
def keyed(monkeypatch, sandbox, tenant):
    """The tenant's key in the environment, as `mediagen lab` gives it to JupyterLab."""
    monkeypatch.setenv("MEDIAGEN_API_KEY", tenant.api_key)
    monkeypatch.setenv("MEDIAGEN_BASE_URL", sandbox.base_url)
    return tenant


def make_feed(sandbox, tenant, hooks=(), **options) -> Feed:
    """A feed of ``tenant`` on a :class:`VirtualClock` (unless ``clock`` is given)."""

    def factory(http: httpx.AsyncClient) -> AsyncClient:
        http.event_hooks["response"].extend(hooks)
        return AsyncClient(
            api_key=tenant.api_key, base_url=sandbox.base_url, http_client=http, journal=False
        )

    options.setdefault("clock", VirtualClock())
    return Feed(factory, **options)


async def feed_for_a_second(sandbox, tenant) -> Feed:
    """A feed one page watched for a second, then stopped: what it read by then."""
    feed = make_feed(sandbox, tenant)
    feed.subscribe("page")
    await advance(feed, 1.0)
    await feed.stop()
    return feed


def gets_of(feed: Feed, generation_id: str) -> list[float]:
    return [t for t, _, p, _ in feed.request_log if p == f"/v1/generations/{generation_id}"]


def lists_of(feed: Feed) -> list[tuple[float, str]]:
    """(time, query) of each read of the list endpoint but today's spend's."""
    return [(t, q) for t, q in _list_reads(feed) if not _midnight(q)]


def test_running_jobs_are_followed_together_every_2_s_backing_off_to_5_s(sandbox, keyed):
    """Three running jobs cost one request of the list endpoint a round, not three GETs: the
    key's rate limit is shared with the kernels and table runs that use it."""
    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, journal=False)
    gens = [
        client.images.create(model="pixel-pro", prompt=f"a slow kite {n} [[slow:4]]", quality="low")
        for n in range(3)
    ]

    async def main() -> Feed:
        feed = make_feed(sandbox, keyed, list_interval=600.0, spend_interval=3600.0)
        feed.subscribe("page")
        deadline = time.monotonic() + 40
        while any(
            feed.generations.get(g.id) is None or feed.generations[g.id].status == "pending"
            for g in gens
        ):
            assert time.monotonic() < deadline, "the jobs never settled in the feed"
            feed.subscribe("page")
            await advance(feed, 0.2)
            if len(lists_of(feed)) >= 5:
                # the back-off has had its steps (as fast as the sandbox answers); the jobs'
                # 4 real seconds are waited out at ten times real speed
                await asyncio.sleep(0.02)
        await feed.stop()
        return feed

    feed = asyncio.run(main())
    assert all(feed.generations[g.id].status == "completed" for g in gens)
    assert not any(gets_of(feed, g.id) for g in gens)  # no request per job
    rounds = [t for t, _ in lists_of(feed)]
    gaps = [b - a for a, b in itertools.pairwise(rounds)]
    assert len(gaps) >= 4, gaps
    assert gaps[:4] == pytest.approx([2.0, 3.0, 4.5, 5.0]), gaps  # 1.5 times longer each time
    assert all(b >= a - 0.3 for a, b in itertools.pairwise(gaps)), gaps  # never faster again
    assert max(gaps) <= 5.6, gaps  # capped at 5 s
    # a round that follows running jobs reads back to the oldest of them (created_after)
    assert all("created_after" in q for _, q in lists_of(feed)[1:-1])


def test_a_running_job_older_than_the_pages_reach_is_read_alone(sandbox, keyed, monkeypatch):
    """A running job whose creation is past what a round lists (more than ``LIST_MOST``
    generations since) is read with its own GET, and still followed to the end."""
    from mediagen.jupyter_server import _feed

    monkeypatch.setattr(_feed, "LIST_MOST", 2)
    monkeypatch.setattr(_feed, "LIST_PAGE", 2)
    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, journal=False)
    old = client.images.create(model="pixel-pro", prompt="an old kite [[slow:3]]", quality="low")

    async def main() -> Feed:
        feed = make_feed(sandbox, keyed, list_interval=600.0, spend_interval=3600.0, page_size=2)
        feed.subscribe("page")
        await advance(feed, 0.1)
        assert old.id in feed.generations  # the newest page found it
        newer = feed_client(sandbox, keyed)
        for n in range(3):  # then three more: the old job is past what a round reads
            await newer.images.create(model="pixel-1", prompt=f"a quick kite {n}")
        await newer.aclose()
        deadline = time.monotonic() + 40
        while feed.generations[old.id].status == "pending":
            assert time.monotonic() < deadline, "the old job never settled in the feed"
            feed.subscribe("page")
            await advance(feed, 0.5)
            await asyncio.sleep(0.05)
        await feed.stop()
        return feed

    feed = asyncio.run(main())
    assert feed.generations[old.id].status == "completed"
    assert gets_of(feed, old.id), "the job the pages did not reach was never read"


@pytest.mark.parametrize("scope", ["all", "credits"])
def test_retry_after_is_waited_out_before_the_next_request(sandbox, keyed, scope):
    seen: list[tuple[float, int, str | None]] = []

    async def record(response: httpx.Response) -> None:
        seen.append((time.monotonic(), response.status_code, response.headers.get("Retry-After")))

    def a_429_was_followed(feed: Feed) -> bool:
        last = feed.request_log[-1][0] if feed.request_log else -math.inf
        return any(status == 429 and after and t < last for t, status, after in seen)

    async def main() -> Feed:
        # real time: the sandbox's limiter counts real seconds, and so does the key's gate
        feed = make_feed(sandbox, keyed, [record], list_interval=0.2, credits_interval=0.2,
                         clock=RealClock())  # fmt: skip
        feed.subscribe("page", scope)
        for _ in range(160):  # 8 s at most
            if a_429_was_followed(feed):
                break
            await asyncio.sleep(0.05)
        await feed.stop()
        return feed

    with sandbox.admin.key_rate_limited(keyed.key_id, 0.5, burst=2):
        feed = asyncio.run(main())
    limited = [(t, float(after)) for t, status, after in seen if status == 429 and after]
    assert limited, f"the sandbox never said 429: {[s for _, s, _ in seen]}"
    sent = [t for t, *_ in feed.request_log]
    for when, after in limited:
        following = [t for t in sent if t > when]
        if following:
            assert following[0] >= when + after - 0.05, (when, after, following[0] - when)


def test_one_poller_for_many_subscribers_and_none_once_they_leave(sandbox, keyed):
    async def main() -> None:
        feed = make_feed(sandbox, keyed)
        for page in ("tab-1", "tab-2", "tab-3"):
            feed.subscribe(page)
        await advance(feed, 2.5)
        assert feed.running
        assert feed.pollers_started == 1
        assert feed.live_subscribers() == 3
        assert feed.credits is not None
        assert feed.credits["balance"] == 1000
        for page in ("tab-1", "tab-2", "tab-3"):
            feed.unsubscribe(page)
        await advance(feed, 1.5)
        assert not feed.running
        quiet = feed.requests_sent
        await advance(feed, 2.5)
        assert feed.requests_sent == quiet  # nothing sent with nobody watching
        feed.subscribe("tab-4")
        await advance(feed, 0.5)
        assert feed.running
        assert feed.pollers_started == 2
        await feed.stop()

    asyncio.run(main())


def test_a_page_that_stops_asking_is_forgotten_after_its_lease(sandbox, keyed):
    async def main() -> None:
        feed = make_feed(sandbox, keyed, lease=1.0)
        feed.subscribe("tab-gone")
        await advance(feed, 0.3)
        assert feed.running
        await advance(feed, 2.5)
        assert not feed.running
        assert feed.live_subscribers() == 0

    asyncio.run(main())


def test_without_a_key_nothing_starts(monkeypatch, sandbox, tenant):
    monkeypatch.delenv("MEDIAGEN_API_KEY", raising=False)

    async def main() -> None:
        feed = make_feed(sandbox, tenant)
        feed.subscribe("page")
        await advance(feed, 0.3)
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

    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, budget=SpendLimit(daily=100),
                    poll_interval=(0.1, 0.5))  # fmt: skip
    client.images.create(model="pixel-pro", prompt="a limited kite", quality="low").wait()

    feed = asyncio.run(feed_for_a_second(sandbox, keyed))
    assert feed.credits == {
        "balance": client.credits.get().balance,
        "spent_today": 0.5,
        "limit_remaining": 99.5,
        "member_limit_remaining": None,
        "limit_error": None,
    }


@pytest.mark.parametrize("setting", ["nan", "lots", "-5", "inf"])
def test_a_spend_limit_setting_that_is_not_credits_is_named_and_the_balance_still_shows(
    monkeypatch, tmp_path, sandbox, keyed, setting
):
    monkeypatch.setenv("MEDIAGEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MEDIAGEN_SPEND_LIMIT_DAILY", setting)

    feed = asyncio.run(feed_for_a_second(sandbox, keyed))
    assert feed.credits is not None
    assert feed.credits["balance"] == 1000
    assert feed.credits["limit_remaining"] is None
    assert feed.credits["limit_error"].startswith(f"MEDIAGEN_SPEND_LIMIT_DAILY={setting!r}")


def _list_reads(feed: Feed) -> list[tuple[float, str]]:
    return [(t, q) for t, _, path, q in feed.request_log if path == "/v1/generations"]


def _midnight(query: str) -> bool:
    """Whether a read of the list is today's spend's: created since midnight UTC."""
    from urllib.parse import parse_qs

    since = parse_qs(query).get("created_after", [None])[0]
    return since is not None and dt.datetime.fromisoformat(since) == start_of_today()


def listings(feed: Feed) -> tuple[list[float], list[float]]:
    """When the feed listed the newest page (or followed its running jobs), and when it listed
    today's generations for today's spend."""
    reads = _list_reads(feed)
    return [t for t, q in reads if not _midnight(q)], [t for t, q in reads if _midnight(q)]


def test_a_credits_only_subscriber_gets_the_credits_without_the_generations(sandbox, keyed):
    """The status bar's subscription: GET /v1/credits and today's spend, never the newest page
    every 2 s nor a job's own GET, and a snapshot without rows."""
    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, journal=False)
    running = client.images.create(model="pixel-pro", prompt="an unwatched kite [[slow:3]]",
                                   quality="low")  # fmt: skip

    async def main() -> tuple[Feed, dict]:
        feed = make_feed(sandbox, keyed, credits_interval=1.0)
        feed.subscribe("status-bar", "credits")
        await advance(feed, 1.5)
        before = feed.credits
        sandbox.admin.grant(keyed.org_id, 250)
        await advance(feed, 3.0)
        assert feed.pollers_started == 1
        assert not feed.watching_generations()
        snapshot = feed.snapshot("credits")
        await feed.stop()
        return feed, {"before": before, "after": feed.credits, "snapshot": snapshot}

    feed, seen = asyncio.run(main())
    assert seen["before"]["balance"] == 999.5  # 1000, less the running job's reservation
    assert seen["after"]["balance"] == client.credits.get().balance == 1249.5
    assert "generations" not in seen["snapshot"]
    assert seen["snapshot"]["credits"] == seen["after"]
    paths = {path for _, _, path, _ in feed.request_log}
    assert paths == {"/v1/credits", "/v1/generations"}, paths
    assert f"/v1/generations/{running.id}" not in paths
    newest, today = listings(feed)
    assert newest == []  # the 2 s listing never started
    # today's spend: at the start and again when the top-up moved the balance, not at every
    # read of the credits
    assert len(today) == 2
    assert len([p for _, _, p, _ in feed.request_log if p == "/v1/credits"]) >= 4


def test_an_all_subscriber_starts_the_listing_and_leaving_stops_it(sandbox, keyed):
    async def main() -> None:
        feed = make_feed(sandbox, keyed)
        feed.subscribe("status-bar", "credits")
        await advance(feed, 1.0)
        assert listings(feed)[0] == []
        feed.subscribe("sidebar", "all")
        await advance(feed, 2.5)
        assert len(listings(feed)[0]) >= 1
        assert feed.pollers_started == 1
        feed.unsubscribe("sidebar")
        await advance(feed, 1.2)  # the request under way ends
        listed = len(listings(feed)[0])
        await advance(feed, 3.0)
        assert len(listings(feed)[0]) == listed
        assert feed.running  # still polling the credits for the status bar
        await feed.stop()

    asyncio.run(main())


def test_todays_spend_sums_every_generation_created_today_across_pages(sandbox, keyed):
    """More generations today than the poller's page and the service's largest page, and some
    from yesterday that do not count."""
    member = keyed.member_id
    yesterday = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)).replace(hour=12)
    charged = {"completed_fraction": 1.0, "failed_fraction": 0.0}
    sandbox.admin.seed_generations(
        member, 5, models=["vidra-edit"], start=yesterday.isoformat(), **charged
    )
    sandbox.admin.seed_generations(
        member, 130, models=["pixel-pro"], interval_seconds=0.01, **charged
    )
    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, journal=False)
    today = start_of_today()
    expected = round(sum(g.credits_charged or 0 for g in client.generations.list(
        created_after=today)), 2)  # fmt: skip
    everything = round(sum(g.credits_charged or 0 for g in client.generations.list()), 2)
    assert 0 < expected < everything

    async def main() -> Feed:
        feed = make_feed(sandbox, keyed, page_size=20)
        feed.subscribe("status-bar", "credits")
        await advance(feed, 1.5)
        assert feed.credits is not None
        assert feed.credits["spent_today"] == expected
        # a job that settles while the sidebar watches is in the sum at once, not a minute on
        feed.subscribe("sidebar", "all")
        await advance(feed, 1.0)
        extra = await feed_client(sandbox, keyed).videos.create(
            model="vidra-edit",
            prompt="a settled edit [[slow:2]]",
            source_video="asset_example_video",
        )
        deadline = time.monotonic() + 20
        while feed.credits["spent_today"] != round(expected + 20, 2):
            assert time.monotonic() < deadline, (feed.credits, extra.id)
            feed.subscribe("sidebar", "all")
            # the job's 2 real seconds at twice real speed: the 20 s deadline comes long
            # before the minute after which the day is listed again
            await advance(feed, 0.2)
            await asyncio.sleep(0.1)
        await feed.stop()
        return feed

    feed = asyncio.run(main())
    assert len(feed.generations) <= 20 + 1  # the poller saw one page and the new job only
    today_pages = listings(feed)[1]
    # two pages (130 generations, 100 a page) at the start; the settled job's charge came from
    # its own answer, without listing the day again
    assert len(today_pages) == 2, today_pages


def feed_client(sandbox, tenant) -> AsyncClient:
    return AsyncClient(api_key=tenant.api_key, base_url=sandbox.base_url, journal=False)


def test_a_running_job_shows_the_estimate_of_its_own_fields_once(sandbox, keyed):
    """A flat-priced job gets the estimate endpoint's quote, asked once; a job whose price
    depends on fields the generation does not report (pixel-pro's quality) gets none."""
    client = Client(api_key=keyed.api_key, base_url=sandbox.base_url, journal=False)
    client.credits.get()
    sandbox.admin.set_discount(keyed.org_id, 10)
    edit = client.videos.create(model="vidra-edit", prompt="a quoted edit [[slow:6]]",
                                source_video="asset_example_video")  # fmt: skip
    kite = client.images.create(model="pixel-pro", prompt="an unquoted kite [[slow:6]]",
                                quality="high")  # fmt: skip

    async def main() -> tuple[Feed, dict]:
        feed = make_feed(sandbox, keyed)
        feed.subscribe("sidebar", "all")
        await advance(feed, 4.0)
        rows = {row["id"]: row for row in feed.snapshot()["generations"]}
        await feed.stop()
        return feed, rows

    feed, rows = asyncio.run(main())
    assert rows[edit.id]["status"] == "pending"
    assert rows[edit.id]["estimate_credits"] == 18.0  # 20 less the 10 % discount
    assert rows[kite.id]["estimate_credits"] is None
    quotes = [q for _, _, p, q in feed.request_log if p == "/v1/models/vidra-edit/estimate"]
    assert len(quotes) == 1, quotes
    assert not any(p.endswith("pixel-pro/estimate") for _, _, p, _ in feed.request_log)

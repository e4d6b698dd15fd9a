"""One poller per Jupyter server: every generation of the key, live, for every open page.

Pages subscribe (a long-poll on ``/mediagen/api/events``); the poller runs only while at least
one subscriber is live, so a Jupyter server nobody watches sends nothing. A subscriber asks for
everything (``"all"``: the Generations panel) or for the credits only (``"credits"``: the status
bar, live whenever JupyterLab is open). It follows the service's polling rules with mediagen's
own :class:`~mediagen.AsyncClient` (configured from the environment, like a kernel's):

- ``GET /v1/credits`` every ``credits_interval`` seconds, and as soon as a watched job settles;
- today's spend: the charges of every generation created since midnight UTC
  (``created_after``, all pages), summed every ``spend_interval`` seconds; a watched job that
  settles adds its charge at once (exact without listing the day again);
- only while an ``"all"`` subscriber is live: ``GET /v1/generations`` (the newest page) every
  ``list_interval`` seconds, which finds jobs started anywhere with this key (a kernel, another
  notebook, a script); while jobs run, the list is read instead 2 s backing off to 5 s (the
  client's own schedule, :func:`mediagen.client._wait.intervals`, from the start again when a
  new job appears), from the oldest running job on, so one request a round follows every
  running job (as ``generations.watch`` does: the key's rate limit is shared with the kernels
  and table runs using it, and a request per job per round would spend it); a running job the
  pages do not reach is read alone. And one estimate per running job whose reported fields
  price it (:mod:`._estimates`);
- a 429's ``Retry-After`` holds every request of the key (the client does it) and, when the
  client gives up, pauses this poller for that long.

Its time is a :class:`Clock`'s (``monotonic()`` and ``await sleep()``): the event loop's by
default, a virtual one in the tests, which move it on rather than wait.

Every change bumps ``version``; a subscriber waits for a version newer than the one it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import os
import time
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, cast

import httpx

from mediagen.client._wait import intervals
from mediagen.jupyter_server import _rows
from mediagen.jupyter_server._estimates import estimate_of

if TYPE_CHECKING:
    from mediagen.client import AsyncClient

ENV_LIMIT_DAILY = "MEDIAGEN_SPEND_LIMIT_DAILY"
ENV_LIMIT_WEEKLY = "MEDIAGEN_SPEND_LIMIT_WEEKLY"
#: what a subscriber asks for: every generation and the credits, or the credits only
SCOPES = ("all", "credits")
#: the page size of a round that follows running jobs (the spec's largest), and the most
#: generations a round reads before the running jobs left are read one by one
LIST_PAGE = 100
LIST_MOST = 300


def spend_limit_from_env() -> Any:
    """The :class:`~mediagen.SpendLimit` the environment names (the same file every client of
    this machine user counts in), or None. A setting that is not a finite number of credits
    >= 0 (``nan``, ``lots``, ``-5``) raises ValueError naming the variable and its value."""
    from mediagen.client._budget import SpendLimit, credit_limit

    limits: dict[str, float] = {}
    for window, name in (("daily", ENV_LIMIT_DAILY), ("weekly", ENV_LIMIT_WEEKLY)):
        raw = os.environ.get(name, "").strip()
        if not raw:
            continue
        try:
            limits[window] = credit_limit(name, float(raw))
        except ValueError:
            raise ValueError(
                f"{name}={raw!r} is not a number of credits >= 0; the spend limit is not shown"
            ) from None
    if not limits:
        return None
    return SpendLimit(daily=limits.get("daily"), weekly=limits.get("weekly"))


class Clock(Protocol):
    """What the poller reads the time from and waits on: every interval, lease and pause."""

    def monotonic(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class RealClock:
    """The real one: :func:`time.monotonic` and :func:`asyncio.sleep`."""

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def key_configured() -> bool:
    return bool(os.environ.get("MEDIAGEN_API_KEY", "").strip())


@dataclasses.dataclass
class _Due:
    """When the feed next lists the generations, reads the credits and sums today's spend (on
    its clock), and the running jobs' listing schedule while any runs."""

    listing: float
    credits: float
    spend: float
    steps: Iterator[float] | None = None


class Feed:
    """The poller and what it knows. Lives on the server's event loop; not thread-safe."""

    def __init__(
        self,
        client_factory: Callable[[httpx.AsyncClient], Any] | None = None,
        *,
        list_interval: float = 2.0,
        poll_interval: tuple[float, float] = (2.0, 5.0),
        credits_interval: float = 15.0,
        spend_interval: float = 60.0,
        lease: float = 30.0,
        page_size: int = 50,
        clock: Clock | None = None,
    ) -> None:
        self._client_factory = client_factory or _client_from_env
        self.list_interval = list_interval
        self.poll_interval = poll_interval
        self.credits_interval = credits_interval
        self.spend_interval = spend_interval
        self.lease = lease
        self.page_size = page_size
        self.clock: Clock = clock or RealClock()
        self._subscribers: dict[str, tuple[float, str]] = {}  # id -> (last seen, scope)
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()
        self.version = 0
        self.generations: dict[str, Any] = {}
        self.credits: dict[str, Any] | None = None
        #: credits charged today (None until summed) and the last GET /v1/credits answer
        self.spent_today: float | None = None
        self._counted: set[str] = set()  # the generations whose charge spent_today holds
        self._counted_since = _rows.start_of_today()
        self._balance: Any = None
        #: credits quoted per running generation id (None: its fields do not price it)
        self.estimates: dict[str, float | None] = {}
        self.error: str | None = None
        self._refresh_asked = False
        #: how many pollers this feed has started, and the HTTP requests they sent
        self.pollers_started = 0
        self.requests_sent = 0
        #: (monotonic time, method, path, query) of each request: what the tests count
        self.request_log: list[tuple[float, str, str, str]] = []

    def _now(self) -> float:
        return self.clock.monotonic()

    # subscribers -------------------------------------------------------------------------

    def subscribe(self, subscriber: str, scope: str = "all") -> None:
        """``subscriber`` is live for ``lease`` seconds from now, wanting ``scope`` (one of
        :data:`SCOPES`); starts the poller if idle."""
        if scope not in SCOPES:
            raise ValueError(f"scope is one of {SCOPES}, not {scope!r}")
        self._subscribers[subscriber] = (self._now(), scope)
        if key_configured() and (self._task is None or self._task.done()):
            self.pollers_started += 1
            self._task = asyncio.get_running_loop().create_task(self._run())

    def unsubscribe(self, subscriber: str) -> None:
        self._subscribers.pop(subscriber, None)

    def live_subscribers(self) -> int:
        now = self._now()
        for sid, (seen, _) in list(self._subscribers.items()):
            if now - seen > self.lease:
                del self._subscribers[sid]
        return len(self._subscribers)

    def watching_generations(self) -> bool:
        """Whether a live subscriber wants the generations (not only the credits)."""
        self.live_subscribers()
        return any(scope == "all" for _, scope in self._subscribers.values())

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        self._subscribers.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # what pages read ---------------------------------------------------------------------

    def snapshot(self, scope: str = "all") -> dict[str, Any]:
        """What a page gets: the credits, and (scope ``"all"``) every generation as a row."""
        state = {
            "version": self.version,
            "configured": key_configured(),
            "polling": self.running,
            "error": self.error,
            "credits": self.credits,
        }
        if scope == "credits":
            return state
        gens = sorted(
            self.generations.values(),
            key=lambda g: g.created_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc),
            reverse=True,
        )
        by_model = _rows.forecasts(gens)
        return {
            **state,
            "generations": [
                _rows.generation_row(g, *self._pending_figures(g, by_model)) for g in gens
            ],
        }

    def _pending_figures(self, gen: Any, by_model: dict[str, float]) -> tuple[Any, Any]:
        """A running job's forecast seconds and quoted credits (None, None once settled)."""
        if gen.status != "pending":
            return None, None
        return _rows.forecast_for(gen, by_model), self.estimates.get(gen.id)

    async def wait_newer(self, version: int, timeout: float) -> None:
        """Until ``version`` is behind (or ``timeout`` passes)."""
        async with self._changed:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self.version > version), timeout
                )

    async def _bump(self) -> None:
        async with self._changed:
            self.version += 1
            self._changed.notify_all()

    # the poller --------------------------------------------------------------------------

    def _count(self, request: httpx.Request) -> None:
        self.requests_sent += 1
        url = request.url
        self.request_log.append((self._now(), request.method, url.path, url.query.decode()))
        del self.request_log[:-2000]

    async def _run(self) -> None:
        async def count(request: httpx.Request) -> None:
            self._count(request)

        http = httpx.AsyncClient(event_hooks={"request": [count]}, verify=_verify())
        try:
            client = self._client_factory(http)
        except Exception as exc:  # a bad base URL, a key with bad characters: say it
            self.error = str(exc)
            await http.aclose()
            await self._bump()
            return
        try:
            await self._poll(client)
        finally:
            await client.aclose()
            await http.aclose()

    async def _poll(self, client: AsyncClient) -> None:
        now = self._now()
        due = _Due(listing=now, credits=now, spend=now)
        while self.live_subscribers():
            try:
                changed, wake = await self._poll_once(client, due)
                if self.error is not None:
                    self.error, changed = None, True
                if changed:
                    await self._bump()
                await self.clock.sleep(max(0.05, min(1.0, wake - self._now())))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                pause = getattr(exc, "retry_after", None) or self.poll_interval[1]
                self.error = one_line(exc)
                await self._bump()
                await self.clock.sleep(pause)

    async def _poll_once(self, client: AsyncClient, due: _Due) -> tuple[bool, float]:
        """Read what is due; (whether anything shown changed, when something is next due)."""
        changed = False
        watching = self.watching_generations()
        if not watching:
            due.steps = None  # nobody shows them; an "all" subscriber lists them again
            due.listing = min(due.listing, self._now())
        elif self._now() >= due.listing:
            changed |= await self._list_when_due(client, due)
        if watching:
            changed |= await self._estimate_running(client)
        if self._refresh_asked:
            self._refresh_asked = False
            due.listing = due.credits = due.spend = self._now()
        if self._now() >= due.credits:
            if await self._refresh_credits(client) and not watching:
                # nobody lists the jobs, so no settled charge was counted: sum today's spend
                # now, or it lags the balance by up to its own interval
                due.spend = self._now()
            changed = True
            due.credits = self._now() + self.credits_interval
        if self._now() >= due.spend:
            changed |= await self._refresh_spend(client)
            due.spend = self._now() + self.spend_interval
        wake = min(due.credits, due.spend)
        return changed, min(wake, due.listing) if watching else wake

    async def _list_when_due(self, client: AsyncClient, due: _Due) -> bool:
        """List the generations; while jobs run, list again on their schedule (2 s, backing
        off; 2 s again when a new job appears). Whether a row changed."""
        before = self._running_ids()
        listed, settled = await self._refresh_list(client)
        if settled:
            due.credits = 0.0
        running = self._running_ids()
        if not running:
            due.steps = None
        elif due.steps is None or running - before:  # a new job: 2 s again
            due.steps = intervals(self.poll_interval)
        pause = self.list_interval if due.steps is None else next(due.steps)
        due.listing = self._now() + min(self.list_interval, pause)
        return listed

    def _running_ids(self) -> set[str]:
        return {gid for gid, g in self.generations.items() if g.status == "pending"}

    async def _refresh_list(self, client: AsyncClient) -> tuple[bool, bool]:
        """The newest page, or (while jobs run) every page back to the oldest running job, and
        a read of any running job those pages do not reach: (whether a row changed, whether a
        charge came that today's spend did not count yet)."""
        running = [g for g in self.generations.values() if g.status == "pending"]
        oldest = min((g.created_at for g in running if g.created_at), default=None)
        since = None if oldest is None else oldest - dt.timedelta(milliseconds=1)
        unseen = {g.id for g in running}
        seen = []
        listing = client.generations.list(
            created_after=since, limit=LIST_PAGE if since else self.page_size
        )
        pages = cast("AsyncGenerator[Any, None]", aiter(listing))  # closed when left early
        async with contextlib.aclosing(pages) as items:
            async for gen in items:
                seen.append(gen)
                unseen.discard(gen.id)
                if len(seen) >= self.page_size and (not unseen or len(seen) >= LIST_MOST):
                    break
        for gen_id in unseen:  # older than the pages reach: read alone
            seen.append(await client.generations.get(gen_id))
        changed = settled = False
        for gen in seen:
            known = self.generations.get(gen.id)
            if known is not None and known.status != "pending":
                continue  # a settled job never changes again
            if known is None or known.status != gen.status:
                changed = True
            self.generations[gen.id] = gen
            if gen.status != "pending":
                settled |= self._count_settled(gen)
                self.estimates.pop(gen.id, None)  # the charge is known now
        return changed, settled

    async def _estimate_running(self, client: AsyncClient) -> bool:
        """Quote each running job once (cached by id); True when a quote was added."""
        added = False
        for gen in list(self.generations.values()):
            if gen.status == "pending" and gen.id not in self.estimates:
                self.estimates[gen.id] = await estimate_of(client, gen)
                added = True
        return added

    async def _refresh_credits(self, client: AsyncClient) -> bool:
        """The balance; True when it moved (a charge, a top-up)."""
        before = None if self._balance is None else self._balance.balance
        self._balance = await client.credits.get()
        self._show_credits()
        return before is not None and self._balance.balance != before

    def refresh_now(self) -> None:
        """Read everything at the poller's next turn (within a second), not at its intervals."""
        self._refresh_asked = True

    async def _refresh_spend(self, client: AsyncClient) -> bool:
        """Sum the charges of every generation created today (all pages); True if it moved."""
        today = _rows.start_of_today()
        created = [g async for g in client.generations.list(created_after=today)]  # 100 a page
        spent = _rows.spent_since(created, today)
        self._counted = {g.id for g in created if g.credits_charged is not None}
        self._counted_since = today
        moved, self.spent_today = spent != self.spent_today, spent
        self._show_credits()
        return moved

    def _count_settled(self, gen: Any) -> bool:
        """Add a settled job's charge to today's spend at once, when the last sum left it out
        (it was running then, or not created yet): exact without listing the day again."""
        if (
            self.spent_today is None
            or self._counted_since != _rows.start_of_today()  # a new day: the next sum says
            or gen.id in self._counted
            or gen.credits_charged is None
            or gen.created_at is None
            or gen.created_at < self._counted_since
        ):
            return False
        self._counted.add(gen.id)
        self.spent_today = round(self.spent_today + gen.credits_charged, 2)
        self._show_credits()
        return True

    def _show_credits(self) -> None:
        """The status figures; a bad spend-limit setting is named beside the balance, which
        shows all the same."""
        if self._balance is not None:
            spent = self.spent_today if self.spent_today is not None else 0.0
            try:
                limit, problem = spend_limit_from_env(), None
            except ValueError as exc:
                limit, problem = None, str(exc)
            self.credits = {
                **_rows.credits_info(self._balance, spent, limit),
                "limit_error": problem,
            }


def _verify() -> Any:
    from mediagen.client._config import ssl_context

    return ssl_context()


def _client_from_env(http: httpx.AsyncClient) -> Any:
    """The kernels' client: ``MEDIAGEN_API_KEY`` / ``MEDIAGEN_BASE_URL`` from the environment
    (``mediagen lab`` sets them for JupyterLab), no journal (the poller only reads)."""
    from mediagen.client import AsyncClient

    return AsyncClient(http_client=http, journal=False)


def one_line(exc: BaseException) -> str:
    """An error as one line for the page (mediagen's errors never hold the key)."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]

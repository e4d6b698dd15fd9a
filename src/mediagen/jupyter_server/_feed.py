"""One poller per Jupyter server: every generation of the key, live, for every open page.

Pages subscribe (a long-poll on ``/mediagen/api/events``); the poller runs only while at least
one subscriber is live, so a Jupyter server nobody watches sends nothing. It follows the
service's polling rules with mediagen's own :class:`~mediagen.AsyncClient` (configured from the
environment, like a kernel's):

- ``GET /v1/generations`` (the newest page) every ``list_interval`` seconds, which finds jobs
  started anywhere with this key: a kernel, another notebook, a script;
- ``GET /v1/generations/{id}`` for each running job, 2 s backing off to 5 s (the client's own
  schedule, :func:`mediagen.client._wait.intervals`);
- ``GET /v1/credits`` now and then, and as soon as a job settles;
- a 429's ``Retry-After`` holds every request of the key (the client does it) and, when the
  client gives up, pauses this poller for that long.

Every change bumps ``version``; a subscriber waits for a version newer than the one it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import time
from collections.abc import Callable
from typing import Any

import httpx

from mediagen.client._wait import intervals
from mediagen.jupyter_server import _rows

ENV_LIMIT_DAILY = "MEDIAGEN_SPEND_LIMIT_DAILY"
ENV_LIMIT_WEEKLY = "MEDIAGEN_SPEND_LIMIT_WEEKLY"


def spend_limit_from_env() -> Any:
    """The :class:`~mediagen.SpendLimit` the environment names (the same file every client of
    this machine user counts in), or None."""
    daily, weekly = os.environ.get(ENV_LIMIT_DAILY), os.environ.get(ENV_LIMIT_WEEKLY)
    if not daily and not weekly:
        return None
    from mediagen.client._budget import SpendLimit

    return SpendLimit(
        daily=float(daily) if daily else None, weekly=float(weekly) if weekly else None
    )


def key_configured() -> bool:
    return bool(os.environ.get("MEDIAGEN_API_KEY", "").strip())


class Feed:
    """The poller and what it knows. Lives on the server's event loop; not thread-safe."""

    def __init__(
        self,
        client_factory: Callable[[httpx.AsyncClient], Any] | None = None,
        *,
        list_interval: float = 2.0,
        poll_interval: tuple[float, float] = (2.0, 5.0),
        credits_interval: float = 15.0,
        lease: float = 30.0,
        page_size: int = 50,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client_factory = client_factory or _client_from_env
        self.list_interval = list_interval
        self.poll_interval = poll_interval
        self.credits_interval = credits_interval
        self.lease = lease
        self.page_size = page_size
        self._clock = clock
        self._subscribers: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None
        self._changed = asyncio.Condition()
        self.version = 0
        self.generations: dict[str, Any] = {}
        self.credits: dict[str, Any] | None = None
        self.error: str | None = None
        #: how many pollers this feed has started, and the HTTP requests they sent
        self.pollers_started = 0
        self.requests_sent = 0
        #: (monotonic time, method, path) of each request: what the tests count
        self.request_log: list[tuple[float, str, str]] = []

    # subscribers -------------------------------------------------------------------------

    def subscribe(self, subscriber: str) -> None:
        """``subscriber`` is live for ``lease`` seconds from now; starts the poller if idle."""
        self._subscribers[subscriber] = self._clock()
        if key_configured() and (self._task is None or self._task.done()):
            self.pollers_started += 1
            self._task = asyncio.get_running_loop().create_task(self._run())

    def unsubscribe(self, subscriber: str) -> None:
        self._subscribers.pop(subscriber, None)

    def live_subscribers(self) -> int:
        now = self._clock()
        for sid, seen in list(self._subscribers.items()):
            if now - seen > self.lease:
                del self._subscribers[sid]
        return len(self._subscribers)

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

    def snapshot(self) -> dict[str, Any]:
        gens = sorted(
            self.generations.values(),
            key=lambda g: g.created_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc),
            reverse=True,
        )
        by_model = _rows.forecasts(gens)
        return {
            "version": self.version,
            "configured": key_configured(),
            "polling": self.running,
            "error": self.error,
            "credits": self.credits,
            "generations": [
                _rows.generation_row(
                    g, _rows.forecast_for(g, by_model) if g.status == "pending" else None
                )
                for g in gens
            ],
        }

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
        self.request_log.append((self._clock(), request.method, request.url.path))
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

    async def _poll(self, client: Any) -> None:
        now = self._clock()
        next_list = next_credits = now
        due: dict[str, tuple[float, Any]] = {}  # running id -> (when, its interval schedule)
        while self.live_subscribers():
            try:
                now = self._clock()
                changed = False
                if now >= next_list:
                    changed |= await self._refresh_list(client, due)
                    next_list = self._clock() + self.list_interval
                for gen_id, (when, steps) in list(due.items()):
                    if self._clock() >= when and gen_id in due:
                        settled = await self._refresh_one(client, gen_id)
                        changed = True
                        if settled:
                            due.pop(gen_id)
                            next_credits = 0.0
                        else:
                            due[gen_id] = (self._clock() + next(steps), steps)
                if self._clock() >= next_credits:
                    await self._refresh_credits(client)
                    changed = True
                    next_credits = self._clock() + self.credits_interval
                if self.error is not None:
                    self.error, changed = None, True
                if changed:
                    await self._bump()
                wake = min([next_list, next_credits, *(when for when, _ in due.values())])
                await asyncio.sleep(max(0.05, min(1.0, wake - self._clock())))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                pause = getattr(exc, "retry_after", None) or self.poll_interval[1]
                self.error = one_line(exc)
                await self._bump()
                await asyncio.sleep(pause)

    async def _refresh_list(self, client: Any, due: dict[str, tuple[float, Any]]) -> bool:
        changed = False
        seen = [g async for g in client.generations.list(limit=self.page_size,
                                                         max_items=self.page_size)]  # fmt: skip
        for gen in seen:
            known = self.generations.get(gen.id)
            if known is not None and known.status != "pending":
                continue  # a settled job never changes again
            if known is None or known.status != gen.status:
                changed = True
            self.generations[gen.id] = gen
            if gen.status != "pending":
                due.pop(gen.id, None)
            elif gen.id not in due:  # the list found it; its own GET follows it from here
                steps = intervals(self.poll_interval)
                due[gen.id] = (self._clock() + next(steps), steps)
        return changed

    async def _refresh_one(self, client: Any, gen_id: str) -> bool:
        gen = await client.generations.get(gen_id)
        self.generations[gen_id] = gen
        return gen.status != "pending"

    async def _refresh_credits(self, client: Any) -> None:
        credits = await client.credits.get()
        today = _rows.start_of_today()
        spent = _rows.spent_since(self.generations.values(), today)
        self.credits = _rows.credits_info(credits, spent, spend_limit_from_env())


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

"""Request work shared out across organizations, so that no organization can stall the others.

Two gates, both per organization, both waiting in the event loop (costing nothing):

- :class:`Door`, at the door: at most ``ADMITTED_PER_ORG`` requests of one organization
  are inside the application at a time. It is taken before the body is read (the API key is
  known from the headers), so a flood's waiting requests cost the server no reading, parsing or
  memory; the server's flow control stops reading their connections.
- :class:`OrgTurns`, for the heavy part of a request (parsing and validating a body of up to
  1 MiB, asset lookups, pricing, the write transaction, a history page), which runs on a worker
  thread, off the event loop. Threads share one GIL, though: a flood of heavy requests would
  keep every thread busy and the event loop would wait its turn behind all of them, for
  everyone. So each organization runs at most ``PER_ORG`` such pieces of work at a time.
  A backlogged organization's next piece also waits (up to ``YIELD_PATIENCE``) while a
  request of an organization without a backlog is being served: those go first.

And while other organizations are working, an organization with more requests than the door
lets in (a batch, a flood) has them served one at a time, each followed by a rest as long as
it took: it gets at most ``BACKLOG_SHARE`` of the server's time, and the rest is free for the
others (the GIL cannot be shared out by priority; only by not asking for it). Alone on the
server, it runs flat out.

Every other organization finds the event loop, the threads and the GIL free.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

T = TypeVar("T")

PER_ORG = 1  # one piece of heavy work per organization at a time; a flood waits in line
# Requests of one organization being served at once. A notebook, a batch script or a widget
# rarely has more than two in flight; a flood's sixteen connections are served four at a time.
ADMITTED_PER_ORG = 4
BACKLOG_SHARE = 0.5  # of the server's time, for an organization with a backlog, while others work
ACTIVE_WITHIN = 1.0  # seconds: an organization that sent a request this recently is working
# Seconds a backlog's next piece waits for other organizations' requests being served to end:
# theirs take about a millisecond; the bound keeps a client that never finishes its request
# from holding anyone up.
YIELD_PATIENCE = 0.05
MIN_REST = 0.002  # seconds: shorter rests are added up (event loop timers have 1 ms steps)


class OrgGates:
    """One semaphore of ``size`` per organization, forgotten when the organization is idle."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}
        self._seen: dict[str, float] = {}  # organization -> when it last came in
        self._inside: dict[str, int] = {}  # organization -> its requests past the gate
        self._left = asyncio.Event()  # set (and replaced) whenever a request leaves

    @asynccontextmanager
    async def turn(self, org_id: str) -> AsyncIterator[None]:
        self._note(org_id)
        gate = self._gates.get(org_id)
        if gate is None:
            gate = self._gates[org_id] = asyncio.Semaphore(self.size)
        self._users[org_id] = self._users.get(org_id, 0) + 1
        try:
            async with gate:
                self._inside[org_id] = self._inside.get(org_id, 0) + 1
                try:
                    yield
                finally:
                    self._inside[org_id] -= 1
                    if not self._inside[org_id]:
                        del self._inside[org_id]
                    self._left.set()
                    self._left = asyncio.Event()
        finally:
            self._users[org_id] -= 1
            if not self._users[org_id]:
                del self._users[org_id]
                del self._gates[org_id]
                self._forget(org_id)

    def _forget(self, org_id: str) -> None:
        """The organization has nothing in flight any more."""

    def _note(self, org_id: str) -> None:
        now = time.monotonic()
        self._seen[org_id] = now
        if len(self._seen) > 64:  # forget organizations that stopped working
            cutoff = now - ACTIVE_WITHIN
            self._seen = {org: at for org, at in self._seen.items() if at > cutoff}

    def others_working(self, org_id: str) -> bool:
        """Whether another organization came in within ``ACTIVE_WITHIN`` seconds."""
        cutoff = time.monotonic() - ACTIVE_WITHIN
        return any(at > cutoff for org, at in self._seen.items() if org != org_id)

    def backlogged(self, org_id: str) -> bool:
        """Whether the organization has more in flight than it may run at once."""
        return self._users.get(org_id, 0) > self.size

    def inside(self) -> list[str]:
        """The organizations with requests past the gate."""
        return list(self._inside)

    async def someone_leaves(self, timeout: float) -> None:
        """Return when a request leaves the gate, or after ``timeout`` seconds."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._left.wait(), timeout)


class Door(OrgGates):
    """``async with door.turn(org_id)`` around a whole request: at most ``ADMITTED_PER_ORG``
    of an organization's requests inside; while other organizations are working, a backlogged
    organization's requests go in one at a time, each followed by a rest as long as it took."""

    def __init__(self) -> None:
        super().__init__(ADMITTED_PER_ORG)
        self._single: dict[str, asyncio.Lock] = {}
        self._owed: dict[str, tuple[float, float]] = {}  # rest owed, when last request ended

    @asynccontextmanager
    async def turn(self, org_id: str) -> AsyncIterator[None]:
        async with super().turn(org_id):
            if not (self.backlogged(org_id) and self.others_working(org_id)):
                self._owed.pop(org_id, None)
                yield
                return
            async with self._single.setdefault(org_id, asyncio.Lock()):
                # Rest owed adds up until it is long enough to sleep (event loop timers step
                # in milliseconds); time the organization left the server alone pays it too.
                owed, last_end = self._owed.get(org_id, (0.0, 0.0))
                owed -= time.monotonic() - last_end
                if owed >= MIN_REST:
                    await asyncio.sleep(owed)
                    owed = 0.0
                started = time.monotonic()
                try:
                    yield
                finally:
                    ended = time.monotonic()
                    owed = max(owed, 0.0) + (ended - started) * (1 / BACKLOG_SHARE - 1)
                    self._owed[org_id] = (owed, ended)

    def _forget(self, org_id: str) -> None:
        self._single.pop(org_id, None)
        self._owed.pop(org_id, None)


class OrgTurns(OrgGates):
    """``await turns.run(org_id, fn, *args)``: ``fn(*args)`` on a worker thread, at most
    ``per_org`` at a time for one organization, a backlog resting between pieces while
    ``door`` (the admission gates, which see every organization's requests) shows others
    working."""

    def __init__(self, door: OrgGates, per_org: int = PER_ORG) -> None:
        super().__init__(per_org)
        self.door = door

    async def run(self, org_id: str, fn: Callable[..., T], *args: Any) -> T:
        async with self.turn(org_id):
            if self.backlogged(org_id):
                await self._after_others(org_id)
            return await run_in_threadpool(fn, *args)

    async def _after_others(self, org_id: str) -> None:
        """Wait (at most ``YIELD_PATIENCE``) until no organization without a backlog has a
        request being served. Backlogged organizations do not wait for each other."""
        deadline = time.monotonic() + YIELD_PATIENCE
        while any(
            org != org_id and not self.backlogged(org) and not self.door.backlogged(org)
            for org in self.door.inside()
        ):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await self.door.someone_leaves(left)

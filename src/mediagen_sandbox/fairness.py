"""Request work shared out across organizations, so that no organization can stall the others.

Two gates, both per organization, both waiting in the event loop (costing nothing):

- :func:`org_admission`, at the door: at most ``ADMITTED_PER_ORG`` requests of one organization
  are inside the application at a time. It is taken before the body is read (the API key is
  known from the headers), so a flood's waiting requests cost the server no reading, parsing or
  memory; the server's flow control stops reading their connections.
- :class:`OrgTurns`, for the heavy part of a request (parsing and validating a body of up to
  1 MiB, asset lookups, pricing, the write transaction, a history page), which runs on a worker
  thread, off the event loop. Threads share one GIL, though: a flood of heavy requests would
  keep every thread busy and the event loop would wait its turn behind all of them, for
  everyone. So each organization runs at most ``PER_ORG`` such pieces of work at a time.
  And while other organizations are being served, an organization with more heavy work
  waiting than it may run (a batch, a flood) rests between pieces as long as each piece took:
  it gets at most ``BACKLOG_SHARE`` of the server's time, and the rest is free for the others
  (the GIL cannot be shared out by priority; only by not asking for it). Alone on the server,
  it runs flat out.

Every other organization finds the event loop, the threads and the GIL free.
"""

from __future__ import annotations

import asyncio
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


class OrgGates:
    """One semaphore of ``size`` per organization, forgotten when the organization is idle."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}
        self._seen: dict[str, float] = {}  # organization -> when it last came in

    @asynccontextmanager
    async def turn(self, org_id: str) -> AsyncIterator[None]:
        self._note(org_id)
        gate = self._gates.get(org_id)
        if gate is None:
            gate = self._gates[org_id] = asyncio.Semaphore(self.size)
        self._users[org_id] = self._users.get(org_id, 0) + 1
        try:
            async with gate:
                yield
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


def org_admission() -> OrgGates:
    """The door's gates: ``async with admission.turn(org_id)`` around a whole request."""
    return OrgGates(ADMITTED_PER_ORG)


class OrgTurns(OrgGates):
    """``await turns.run(org_id, fn, *args)``: ``fn(*args)`` on a worker thread, at most
    ``per_org`` at a time for one organization, a backlog resting between pieces while
    ``door`` (the admission gates, which see every organization's requests) shows others
    working."""

    def __init__(self, door: OrgGates, per_org: int = PER_ORG) -> None:
        super().__init__(per_org)
        self.door = door
        self._rest_until: dict[str, float] = {}

    async def run(self, org_id: str, fn: Callable[..., T], *args: Any) -> T:
        async with self.turn(org_id):
            rest = self._rest_until.pop(org_id, 0.0) - time.monotonic()
            if rest > 0:
                await asyncio.sleep(rest)
            started = time.monotonic()
            try:
                return await run_in_threadpool(fn, *args)
            finally:
                if self.backlogged(org_id) and self.door.others_working(org_id):
                    took = time.monotonic() - started
                    self._rest_until[org_id] = started + took / BACKLOG_SHARE

    def _forget(self, org_id: str) -> None:
        self._rest_until.pop(org_id, None)

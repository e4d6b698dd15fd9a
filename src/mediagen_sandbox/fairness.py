"""Request work shared out across organizations, so that no organization can stall the others.

The heavy part of a request (parsing and validating a body of up to 1 MiB, asset lookups,
pricing, the write transaction, a history page) runs on a worker thread, off the event loop.
Threads share one GIL, though: a flood of heavy requests on sixteen connections would keep
sixteen threads busy and the event loop would wait its turn behind all of them, for everyone.
So each organization runs at most ``PER_ORG`` such pieces of work at a time; its other requests
wait (in the event loop, costing nothing) for their turn, and every other organization finds
the loop and the threads free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

T = TypeVar("T")

PER_ORG = 1  # one piece of heavy work per organization at a time; a flood waits in line


class OrgTurns:
    """``await turns.run(org_id, fn, *args)``: ``fn(*args)`` on a worker thread, at most
    ``per_org`` at a time for one organization."""

    def __init__(self, per_org: int = PER_ORG) -> None:
        self.per_org = per_org
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}

    async def run(self, org_id: str, fn: Callable[..., T], *args: Any) -> T:
        gate = self._gates.get(org_id)
        if gate is None:
            gate = self._gates[org_id] = asyncio.Semaphore(self.per_org)
        self._users[org_id] = self._users.get(org_id, 0) + 1
        try:
            async with gate:
                return await run_in_threadpool(fn, *args)
        finally:
            self._users[org_id] -= 1
            if not self._users[org_id]:  # forget idle organizations
                del self._users[org_id]
                del self._gates[org_id]

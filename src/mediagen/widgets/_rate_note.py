"""What a job's card says while the key's rate limit holds its polls.

The spec puts one rate limit on each key, shared by every kernel, table run and sidebar using
it. A job whose polls wait on that limit would otherwise show a bar and a clock that seem
frozen; its card says "waiting for the rate limit" instead, with the pace held and the 429s
seen. Read from the client's own pacing (``rate_status()``), a local read: no request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, RateStatus

_T = TypeVar("_T")

#: how often a watched job looks at the key's pace (seconds)
CHECK_S = 1.0
#: a wait behind the key's pace this long (seconds) is worth saying
HELD_S = 0.25


def rate_note(status: RateStatus) -> str:
    """The line a card shows while the key's rate limit holds its polls."""
    figures = status.describe(waiting=False)
    return f"waiting for the rate limit ({figures})" if figures else "waiting for the rate limit"


async def noting_the_rate(
    client: AsyncClient, waiting: Awaitable[_T], show: Callable[[str], None]
) -> _T:
    """Await ``waiting`` (a job's wait); meanwhile, each :data:`CHECK_S`, ``show`` the note
    when a 429 came since the last look or the key's requests wait (a 429's hold, or the pace
    learned from them), and ``""`` when that ends (and at the end); only changes are shown."""
    task = asyncio.ensure_future(waiting)
    seen, shown = client.rate_status().limited, ""
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=CHECK_S)
            status = client.rate_status()
            held = status.limited > seen or status.held_for >= HELD_S
            seen = status.limited
            note = rate_note(status) if held and not task.done() else ""
            if note != shown:  # only a change reaches the page
                show(note)
                shown = note
    finally:
        if not task.done():  # the watcher was cancelled: so is the wait
            task.cancel()
        if shown:
            show("")
    return task.result()

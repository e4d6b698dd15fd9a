"""Waiting for generations: ``wait`` (one job) and ``watch`` (many, per page not per job).

Polling starts at ``poll_interval[0]`` and backs off by half each time up to
``poll_interval[1]`` (2 s -> 5 s by default). ``wait`` never resubmits; on timeout it raises
:class:`WaitTimeoutError` naming the generation and saying it may still complete.

``watch`` asks ``GET /v1/generations?created_after=<oldest pending>`` (100 per page) once per
round, so the cost is pages per round, not one request per job; ids the list did not show
are read one by one (rare). Completed generations are downloaded into the cache before they
are handed out (the URLs are temporary).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeAlias

from mediagen.client import _requests
from mediagen.client._effects import Call, ClientCore, Emit, Flow, Invoke, Now, Sleep
from mediagen.client._errors import APITimeoutError, WaitInterrupted, WaitTimeoutError
from mediagen.client._models import Generation
from mediagen.client._transport import save_generation
from mediagen.wire import _names as _wire
from mediagen.wire._fields import read_field

BACKOFF = 1.5
#: the first read of a wait may take this long even when its timeout is shorter (or 0):
#: ``wait(gen, timeout=0)`` takes one look instead of timing out blind
FIRST_LOOK = 1.0
#: below this many pending jobs, one GET each is cheaper than listing pages
WATCH_LIST_MIN = 3


def generation_id(value: Any) -> str:
    if isinstance(value, str):
        return value
    found = read_field(value, "id")
    if not found:
        raise TypeError(f"expected a generation or its id, not {value!r}")
    return str(found)


def intervals(poll_interval: tuple[float, float]) -> Iterator[float]:
    interval, cap = poll_interval
    while True:
        yield interval
        interval = min(cap, interval * BACKOFF) if interval else cap


def finish(
    client: ClientCore, gen: Generation[Any], download: bool, deadline: float | None = None
) -> Flow[Generation[Any]]:
    """Flow: journal the terminal state and (completed) download the outputs."""
    client._journal_finished(gen)
    if download and gen.status == "completed" and gen.outputs:
        yield from save_generation(client, gen, None, deadline)
    return gen


def first_look(start: float, deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline, start + FIRST_LOOK)


def poll(client: ClientCore, gid: str, deadline: float | None) -> Flow[Generation[Any]]:
    """Flow: read one generation; transient failures are retried until ``deadline``."""
    spec = _requests.get_generation(gid)
    data = yield Call(spec, deadline=deadline, persistent=True)
    return Generation.from_dict(data, client=client)


def wait(
    client: ClientCore,
    target: Any,
    *,
    timeout: float | None,
    on_update: Callable[[Generation[Any]], Any] | None,
    poll_interval: tuple[float, float],
    download: bool,
) -> Flow[Generation[Any]]:
    """Flow: poll until terminal. ``timeout`` is a deadline for the whole wait: every poll
    (and its retries through an outage) ends by then, and then WaitTimeoutError says so."""
    gid = generation_id(target)
    start = yield Now()
    deadline = None if timeout is None else start + timeout
    gen = target if isinstance(target, Generation) else None
    try:
        if gen is None or not gen.done:
            gen = yield from poll(client, gid, first_look(start, deadline))
        steps = intervals(poll_interval)
        while not gen.done:
            if on_update is not None:
                yield Invoke(on_update, (gen,))
            now = yield Now()
            if deadline is not None and now >= deadline:
                raise WaitTimeoutError(gid, timeout, gen)
            pause = next(steps)
            if deadline is not None:
                pause = min(pause, max(0.0, deadline - now))
            yield Sleep(pause)
            gen = yield from poll(client, gid, deadline)
        gen = yield from finish(client, gen, download, deadline)
    except APITimeoutError:
        now = yield Now()
        if deadline is None or now < deadline:
            raise
        raise WaitTimeoutError(gid, timeout, gen) from None
    except KeyboardInterrupt:
        raise WaitInterrupted(gid, gen) from None
    if on_update is not None:
        yield Invoke(on_update, (gen,))
    return gen


#: the generations a watch still waits for, by id (None: only the id is known yet)
_Pending: TypeAlias = dict[str, "Generation[Any] | None"]


def _oldest(gens: Iterable[Generation[Any]]) -> dt.datetime | None:
    times = [g.created_at for g in gens if g.created_at is not None]
    return min(times) if times else None


def watch(
    client: ClientCore,
    targets: Iterable[Any],
    *,
    timeout: float | None,
    on_update: Callable[[Generation[Any]], Any] | None,
    poll_interval: tuple[float, float],
    download: bool,
) -> Flow[None]:
    """Flow (iterating): emits each generation once, when it is terminal."""
    pending: _Pending = {}
    for item in targets:
        gid = generation_id(item)
        pending[gid] = item if isinstance(item, Generation) else None
    start = yield Now()
    deadline = None if timeout is None else start + timeout
    try:
        yield from _watch_rounds(client, pending, start, timeout, deadline, on_update,
                                 poll_interval, download)  # fmt: skip
    except APITimeoutError:
        now = yield Now()
        if deadline is None or now < deadline or not pending:
            raise
        first = next(iter(pending))
        raise WaitTimeoutError(first, timeout, pending[first]) from None
    except KeyboardInterrupt:
        if not pending:
            raise
        first = next(iter(pending))
        raise WaitInterrupted(first, pending[first], list(pending)) from None


def _watch_rounds(
    client: ClientCore,
    pending: _Pending,
    start: float,
    timeout: float | None,
    deadline: float | None,
    on_update: Callable[[Generation[Any]], Any] | None,
    poll_interval: tuple[float, float],
    download: bool,
) -> Flow[None]:
    yield from _emit_terminal_first(client, pending, start, deadline, download)
    steps = intervals(poll_interval)
    while pending:
        pause = yield from _next_pause(pending, start, timeout, steps)
        yield Sleep(pause)
        fresh = yield from _read_round(client, pending, deadline)
        for gid, gen in fresh.items():
            pending[gid] = gen
            if on_update is not None:
                yield Invoke(on_update, (gen,))
            if gen.done:
                del pending[gid]
                gen = yield from finish(client, gen, download, deadline)
                yield Emit(gen)


def _emit_terminal_first(
    client: ClientCore, pending: _Pending, start: float, deadline: float | None, download: bool
) -> Flow[None]:
    """Already-terminal ones are emitted before any pause; unknown ones (ids only) are read
    once to learn their state and ``created_at``."""
    for gid, gen in list(pending.items()):
        if gen is None:
            gen = yield from poll(client, gid, first_look(start, deadline))
            pending[gid] = gen
        if gen.done:
            del pending[gid]
            gen = yield from finish(client, gen, download, deadline)
            yield Emit(gen)


def _next_pause(
    pending: _Pending, start: float, timeout: float | None, steps: Iterator[float]
) -> Flow[float]:
    """The pause before the next round, cut to the time left; past ``timeout`` the first
    pending job's ``WaitTimeoutError``."""
    elapsed = (yield Now()) - start
    if timeout is not None and elapsed >= timeout:
        first = next(iter(pending))
        raise WaitTimeoutError(first, timeout, pending[first])
    pause = next(steps)
    if timeout is not None:
        pause = min(pause, max(0.0, timeout - elapsed))
    return pause


def _read_round(
    client: ClientCore, pending: _Pending, deadline: float | None
) -> Flow[dict[str, Generation[Any]]]:
    """One round's state of every pending job: from the list endpoint's pages when there are
    many (a page per 100 jobs, not a request per job), then one read per job still unseen."""
    fresh: dict[str, Generation[Any]] = {}
    if len(pending) >= WATCH_LIST_MIN:
        yield from _read_listed(client, pending, deadline, fresh)
    for gid in pending:
        if gid not in fresh:
            fresh[gid] = yield from poll(client, gid, deadline)
    return fresh


def _read_listed(
    client: ClientCore,
    pending: _Pending,
    deadline: float | None,
    fresh: dict[str, Generation[Any]],
) -> Flow[None]:
    """Pages of the generations made since the oldest pending one, into ``fresh``, until
    every pending job was seen or the pages end."""
    oldest = _oldest(g for g in pending.values() if g is not None)
    since = None if oldest is None else oldest - dt.timedelta(milliseconds=1)
    cursor = None
    while True:
        page = yield Call(
            _requests.list_generations(
                limit=_wire.PAGE_SIZE_MAX, after=cursor, created_after=since
            ),
            deadline=deadline,
            persistent=True,
        )
        for item in _requests.page_items(page):
            gid = item.get("id") if isinstance(item, dict) else None
            if gid in pending:
                fresh[gid] = Generation.from_dict(item, client=client)
        cursor = _requests.page_next_cursor(page)
        if cursor is None or len(fresh) == len(pending):
            break

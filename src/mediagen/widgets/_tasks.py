"""Background work for widgets: asyncio tasks on the kernel's running loop (a thread if none).

In a Jupyter kernel, cells and widget callbacks run on one asyncio loop; work scheduled there
with ``create_task`` runs while the user keeps executing cells. In a plain script (no running
loop) the same coroutines run on one daemon thread's loop, shared by all widgets. Nothing here
patches asyncio. Failures are handed to a reporter (a widget's ``report``), never swallowed.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")
Reporter = Callable[[BaseException], None]

_thread_loop: asyncio.AbstractEventLoop | None = None
_thread_lock = threading.Lock()
_workers: concurrent.futures.ThreadPoolExecutor | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    """One event loop on a daemon thread, for when no loop runs in this thread."""
    global _thread_loop
    with _thread_lock:
        if _thread_loop is None or _thread_loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="mediagen-widgets", daemon=True).start()
            _thread_loop = loop
        return _thread_loop


def current_loop() -> asyncio.AbstractEventLoop:
    """The loop widget work runs on: the running one (the kernel's), else the thread's."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return _background_loop()


class Handle:
    """A scheduled piece of work: cancel it, or wait for it from synchronous code (tests)."""

    def __init__(self, future: asyncio.Future[Any] | concurrent.futures.Future[Any]) -> None:
        self._future = future

    def cancel(self) -> None:
        loop = getattr(self._future, "get_loop", None)
        if loop is not None:
            loop().call_soon_threadsafe(self._future.cancel)
        else:
            self._future.cancel()

    def done(self) -> bool:
        return self._future.done()

    def result(self, timeout: float | None = None) -> Any:
        """Block until done (from a thread without a running loop only)."""
        if isinstance(self._future, concurrent.futures.Future):
            return self._future.result(timeout)
        if not self._future.done():
            raise RuntimeError("await the task instead: it runs on this thread's loop")
        return self._future.result()

    def __await__(self) -> Generator[Any, None, Any]:
        if isinstance(self._future, concurrent.futures.Future):
            return asyncio.wrap_future(self._future).__await__()
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is not None and self._future.get_loop() is not here:
            return asyncio.wrap_future(_bridge(self._future)).__await__()
        return self._future.__await__()


def _bridge(future: asyncio.Future[Any]) -> concurrent.futures.Future[Any]:
    """``future``'s outcome, awaitable from another loop.

    ipykernel 7 may handle a widget's comm message on another loop than the one running the
    cell's top-level ``await``; a task spawned by a click is then awaited across loops.
    """
    bridge: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def copy(done: asyncio.Future[Any]) -> None:
        if done.cancelled():
            bridge.cancel()
        elif done.exception() is not None:
            bridge.set_exception(done.exception())
        else:
            bridge.set_result(done.result())

    future.get_loop().call_soon_threadsafe(future.add_done_callback, copy)
    return bridge


async def _guarded(coro: Awaitable[T], reporter: Reporter | None) -> T | None:
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if reporter is None:
            raise
        reporter(exc)
        return None


def spawn(coro: Coroutine[Any, Any, T], *, reporter: Reporter | None = None) -> Handle:
    """Run ``coro`` in the background; an exception goes to ``reporter`` (if given)."""
    guarded = _guarded(coro, reporter)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return Handle(asyncio.run_coroutine_threadsafe(guarded, _background_loop()))
    return Handle(loop.create_task(guarded))


def started(fn: Callable[[], T]) -> Handle:
    """``fn()`` started now on a worker thread, its result awaitable later on any loop.

    For a blocking request that should be under way while the cell that asked for it is still
    running (the kernel's loop runs nothing else until the cell returns).
    """
    global _workers
    with _thread_lock:
        if _workers is None:
            _workers = concurrent.futures.ThreadPoolExecutor(
                max_workers=2, thread_name_prefix="mediagen-widgets-io"
            )
        return Handle(_workers.submit(fn))


class Latest:
    """Debounced "latest wins" scheduling, for estimates while the user edits the form.

    ``schedule(factory)`` cancels what is waiting, waits ``delay`` seconds of quiet, then runs
    ``factory()``; ``deliver(result)`` is called only if no newer ``schedule`` happened since,
    so a slow, stale answer can never overwrite a fresh one.
    """

    def __init__(self, delay: float, deliver: Callable[[Any], None], reporter: Reporter) -> None:
        self.delay = delay
        self._deliver = deliver
        self._reporter = reporter
        self._generation = 0
        self._handle: Handle | None = None

    def schedule(self, factory: Callable[[], Awaitable[Any]]) -> Handle:
        self._generation += 1
        ticket = self._generation
        if self._handle is not None and not self._handle.done():
            self._handle.cancel()

        async def run() -> None:
            if self.delay:
                await asyncio.sleep(self.delay)
            try:
                result = await factory()
            except Exception as exc:
                if ticket == self._generation:
                    self._reporter(exc)
                return
            if ticket == self._generation:
                self._deliver(result)

        self._handle = spawn(run(), reporter=self._reporter)
        return self._handle

    @property
    def latest(self) -> Handle | None:
        return self._handle

"""``client.executor()``: the one way a blocking client runs many calls at once (a batch's
submits, a table's rows). Attacked as a user would: Ctrl-C mid-batch, a budget set around it,
more calls than workers."""

from __future__ import annotations

import threading
import time

import pytest

import mediagen
from mediagen.client import _hooks


def _reserves(sandbox, tenant) -> int:
    return sum(1 for e in sandbox.admin.ledger(tenant.org_id)["entries"] if e["kind"] == "reserve")


def test_at_most_concurrency_calls_run_at_once_and_each_sees_the_callers_budget(client):
    running, most = [0], [0]
    lock = threading.Lock()
    seen = []

    def call() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        seen.append(mediagen.client._budget.active_budgets())
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    with mediagen.budget(5) as limit, client.executor(2) as pool:
        futures = [pool.submit(call) for _ in range(8)]
    assert [f.result(timeout=0) for f in futures] == [None] * 8  # leaving waited for each call
    assert len(seen) == 8
    assert most[0] == 2
    assert all(found == (limit,) for found in seen)  # each worker ran in the caller's context


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_a_concurrency_that_is_not_a_whole_number_from_1_is_refused(client, bad):
    with pytest.raises(ValueError, match=r"concurrency must be a whole number >= 1"):
        client.executor(bad)


def test_ctrl_c_mid_batch_sends_nothing_more(client, sandbox, tenant, monkeypatch):
    """An interrupt while a batch is being submitted: what was sent stays (each recoverable by
    its key), nothing not yet started is sent after it (the pool used to drain its queue)."""
    requests = [{"model": "pixel-1", "prompt": f"a pebble, number {i}"} for i in range(20)]

    class Bar:
        def __init__(self) -> None:
            self.done = 0

        def advance(self) -> None:
            self.done += 1
            raise KeyboardInterrupt  # the user presses Ctrl-C as the first submit lands

        def update(self, **_: object) -> None:
            pass

    def reporter(*_: object, **__: object):
        import contextlib

        return contextlib.nullcontext(Bar())

    previous = _hooks.install_progress(reporter)
    try:
        with pytest.raises(KeyboardInterrupt):
            client.submit_batch(requests, concurrency=1, show_estimate=False)
    finally:
        _hooks.install_progress(previous)
    # When the interrupt leaves submit_batch, the submit under way has ended and the queue is
    # cancelled: fewer than all were sent (how many depends on how soon the interrupted thread
    # ran again, on a loaded machine), and nothing is sent after.
    at_interrupt = _reserves(sandbox, tenant)
    assert at_interrupt < len(requests), "the batch drained its queue before the interrupt"
    time.sleep(0.5)  # anything still queued would have been sent by now
    assert _reserves(sandbox, tenant) == at_interrupt, "the batch kept submitting after Ctrl-C"


# --- the asyncio twin: ``aclient.executor()`` --------------------------------------------------


def _aclient(sandbox, tenant, tmp_path) -> mediagen.AsyncClient:
    return mediagen.AsyncClient(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path / "cache"
    )


def test_async_at_most_concurrency_calls_run_at_once_in_the_callers_context(
    sandbox, tenant, tmp_path
):
    import asyncio

    running, most, seen = [0], [0], []

    async def call(n: int) -> int:
        running[0] += 1
        most[0] = max(most[0], running[0])
        seen.append(mediagen.client._budget.active_budgets())
        await asyncio.sleep(0.02)
        running[0] -= 1
        return n

    async def main():
        async with _aclient(sandbox, tenant, tmp_path) as aclient:
            with mediagen.budget(5) as limit:
                async with aclient.executor(3) as pool:
                    tasks = [pool.submit(call, n) for n in range(10)]
            return limit, [t.result() for t in tasks]

    limit, results = asyncio.run(main())
    assert results == list(range(10))
    assert most[0] == 3
    assert all(found == (limit,) for found in seen)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_async_a_concurrency_that_is_not_a_whole_number_from_1_is_refused(
    sandbox, tenant, tmp_path, bad
):
    aclient = _aclient(sandbox, tenant, tmp_path)
    with pytest.raises(ValueError, match=r"concurrency must be a whole number >= 1"):
        aclient.executor(bad)


def test_async_a_cancelled_batch_sends_nothing_more_and_finishes_what_was_sent(
    sandbox, tenant, tmp_path
):
    """The task awaiting a batch is cancelled (a notebook's interrupt, a timeout around it)
    as the first submit lands: the batch stops short, and no submit goes out once the cancel
    has returned."""
    import asyncio

    requests = [{"model": "pixel-1", "prompt": f"a shell, number {i}"} for i in range(8)]

    async def main():
        async with _aclient(sandbox, tenant, tmp_path) as aclient:
            batch = asyncio.ensure_future(
                aclient.submit_batch(requests, concurrency=1, show_estimate=False)
            )
            for _ in range(1000):  # until the first submit reaches the service
                if _reserves(sandbox, tenant):
                    break
                await asyncio.sleep(0.01)
            batch.cancel()
            with pytest.raises(asyncio.CancelledError):
                await batch
            at_cancel = _reserves(sandbox, tenant)
            await asyncio.sleep(0.5)  # anything still queued would have been sent by now
            return at_cancel

    at_cancel = asyncio.run(main())
    # how many went out before the cancel took hold depends on the machine's load; that none
    # goes out after it, and that the batch did not run to its end, does not
    assert at_cancel < len(requests), "the cancel did not stop the batch"
    assert _reserves(sandbox, tenant) == at_cancel, (
        "the batch kept submitting after it was cancelled"
    )


def test_async_batch_runs_through_the_executor_with_its_progress(sandbox, tenant, tmp_path):
    """``AsyncClient.submit_batch`` shows the same progress as the blocking one: one advance
    per submit, through the executor's bound."""
    import asyncio
    import contextlib

    advances = []

    class Bar:
        def advance(self) -> None:
            advances.append(1)

        def update(self, **_: object) -> None:
            pass

    def reporter(*_: object, **__: object):
        return contextlib.nullcontext(Bar())

    requests = [{"model": "pixel-1", "prompt": f"a leaf, number {i}"} for i in range(5)]

    async def main():
        async with _aclient(sandbox, tenant, tmp_path) as aclient:
            return await aclient.submit_batch(requests, concurrency=2, show_estimate=False)

    previous = _hooks.install_progress(reporter)
    try:
        result = asyncio.run(main())
    finally:
        _hooks.install_progress(previous)
    assert all(item.ok for item in result)
    assert len(advances) == 5
    assert _reserves(sandbox, tenant) == 5

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
    assert all(f.done() for f in futures)
    assert most[0] == 2
    assert all(found == (limit,) for found in seen)  # each worker ran in the caller's context


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4"])
def test_a_concurrency_that_is_not_a_whole_number_from_1_is_refused(client, bad):
    with pytest.raises(ValueError, match=r"concurrency must be a whole number >= 1"):
        client.executor(bad)


def test_ctrl_c_mid_batch_sends_nothing_more(client, sandbox, tenant, monkeypatch):
    """An interrupt while a batch is being submitted: what was sent stays (each recoverable by
    its key), nothing not yet started is sent after it (the pool used to drain its queue)."""
    requests = [{"model": "pixel-1", "prompt": f"a pebble, number {i}"} for i in range(8)]

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
    time.sleep(0.5)  # anything still queued would have been sent by now
    assert _reserves(sandbox, tenant) <= 2, "the batch kept submitting after Ctrl-C"

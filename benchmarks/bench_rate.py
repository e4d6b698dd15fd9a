"""A table run at the key's rate limit: how much of the limit it uses, and how many 429s it earns.

The sandbox limits each key to ``--limit`` requests per second (its admin API's
``rate_limit_per_second``, with a burst of one second's worth). A table of ``--rows`` rows runs
in this process at ``--speed 0``; the output says, as ratios against the limit:

- **used**: API requests answered (not 429) per second, over the limit. Goal >= 0.85.
- **429 share**: 429 answers over all API requests. Goal <= 0.02.

printed for the client as it is (learning the limit from the 429s) and, in the same run, for
the same client told the limit (``rate_limit=``), the fixed pace a user would have to know.
``--change`` instead lowers the limit to a quarter mid-run, then raises it to double, and
prints how long the run took to follow each change (goal: within 10 s each way).

``--dask 4`` runs the table with ``mediagen.dask.generate`` on a ``LocalCluster`` of 4 worker
processes, all with the same key, twice in the same run: with the key's pace shared between
the workers (as the client does), and each worker pacing itself alone with its fixed
concurrency (``MEDIAGEN_SHARED_PACE=0``: how every process learned the limit before). The
requests are counted where they arrive, by the sandbox, over the time the key was in use
(from its first request of the compute to its last), and the line also gives the used share
over the whole compute, which adds the workers' start and the results' way back (about a
second of forty on a 2-core machine); every row must complete. Goal for the shared run:
used >= 0.85, 429 share <= 0.02.

``--machines 2`` runs it on a Dask cluster of 2 "machines" (a worker each, each with a pace
file of its own, as on separate hosts) that know nothing of the limit: they learn it together
through distributed's events. No goal set; every row must complete.

    python benchmarks/bench_rate.py                        # 1,000 rows at 20 requests/s
    python benchmarks/bench_rate.py --rows 300 --limit 20
    python benchmarks/bench_rate.py --change --rows 1500
    python benchmarks/bench_rate.py --dask 4 --rows 600    # about 2 minutes on 2 cores
    python benchmarks/bench_rate.py --machines 2 --rows 600 --limit 10
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections import deque
from pathlib import Path

from mediagen_sandbox.testing import running_sandbox


class Tally:
    """API requests and their answers, with the time of each (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.answers: deque[tuple[float, int]] = deque()

    def hook(self, response) -> None:
        if response.request.url.path.startswith("/v1/"):
            with self.lock:
                self.answers.append((time.monotonic(), response.status_code))

    def between(self, start: float, end: float) -> tuple[int, int]:
        """(answered, rate limited) in [start, end)."""
        with self.lock:
            found = [s for t, s in self.answers if start <= t < end]
        return sum(1 for s in found if s != 429), sum(1 for s in found if s == 429)


def _run(sandbox, key: str, rows: int, root: Path, rate_limit: float | None, on_start=None):
    import httpx
    import pandas as pd

    import mediagen

    tally = Tally()
    http = httpx.Client(timeout=60, event_hooks={"response": [tally.hook]})
    client = mediagen.Client(api_key=key, base_url=sandbox.base_url, cache_dir=root,
                             http_client=http, rate_limit=rate_limit)  # fmt: skip
    frame = pd.DataFrame({"caption": [f"item {i} of {root.name}" for i in range(rows)]})
    plan = frame.mediagen.plan(client, model="pixel-1", prompt="{caption}")
    tally.answers.clear()  # the run, not the pricing
    start = time.monotonic()
    if on_start is not None:
        on_start(start, tally)
    out = plan.run(run_id=root.name, progress=False)
    end = time.monotonic()
    client.close()
    assert (out["status"] == "completed").all(), out["status"].value_counts()
    return start, end, tally


def _report(label: str, limit: float, start: float, end: float, tally: Tally) -> None:
    answered, limited = tally.between(start, end + 1)
    used = answered / (end - start) / limit
    share = limited / max(1, answered + limited)
    print(f"{label:<34} used {used:5.2f} of the limit   429 share {share:6.3f}   "
          f"({answered + limited} requests)", flush=True)  # fmt: skip


def _followed(tally: Tally, since: float, limit: float, until: float) -> float | None:
    """Seconds after ``since`` until a 2 s window's answered rate is within 15% of ``limit``
    and stays under 1.15x of it."""
    t = since
    while t + 2 <= until:
        answered, _ = tally.between(t, t + 2)
        if 0.7 * limit <= answered / 2 <= 1.15 * limit:
            return t + 2 - since
        t += 0.5
    return None


class Sending:
    """When a key's requests arrived at the sandbox: its counts, read every ``every`` seconds
    on a thread of its own. The first and last reads that found a new request bound the time
    the key was in use, which a cluster's compute starts late (the workers' processes import
    what a partition needs) and ends late (the last results travel back to the client)."""

    def __init__(self, sandbox, key_id: str, every: float = 0.2) -> None:
        self.sandbox, self.key_id, self.every = sandbox, key_id, every
        self.first: float | None = None
        self.last: float | None = None
        self.stop = threading.Event()
        self.seen = self.sandbox.admin.key_requests(self.key_id).passed
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.stop.wait(self.every):
            passed = self.sandbox.admin.key_requests(self.key_id).passed
            if passed != self.seen:
                now = time.monotonic()
                if self.first is None:  # the first request came since the last read
                    self.first = now - self.every
                self.seen, self.last = passed, now

    def window(self) -> float | None:
        self.stop.set()
        self.thread.join()
        if self.first is None or self.last is None:
            return None
        return self.last - self.first


def _compute_and_report(label: str, sandbox, tenant, result, rows: int, limit: float) -> None:
    """Compute a lazy table run, counting the key's requests where they arrive (the sandbox):
    one line of ratios over the time the key was in use, and the used share over the whole
    compute, its start and end included."""
    before = sandbox.admin.key_requests(tenant.key_id)
    sending = Sending(sandbox, tenant.key_id)
    start = time.monotonic()
    out = result.compute()
    took = time.monotonic() - start
    window = sending.window() or took
    after = sandbox.admin.key_requests(tenant.key_id)
    passed, limited = after.passed - before.passed, after.limited - before.limited
    completed = int((out["status"] == "completed").sum())
    if completed < rows:
        print(out["error"].value_counts().head(3).to_string(), flush=True)
    print(f"{label:<34} used {passed / window / limit:5.2f} of the limit   "
          f"429 share {limited / max(1, passed + limited):6.3f}   "
          f"({passed + limited} requests, {completed}/{rows} rows completed, {window:.0f} s "
          f"sending; over the whole compute, {took:.0f} s: used "
          f"{passed / took / limit:.2f})", flush=True)  # fmt: skip


def _run_dask(sandbox, workers: int, rows: int, limit: float, root: Path, shared: bool) -> None:
    """The table on a fresh ``LocalCluster`` of ``workers`` processes; one line of ratios."""
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    import mediagen

    tenant = sandbox.new_tenant(balance=10_000_000)
    env = {
        "MEDIAGEN_API_KEY": tenant.api_key,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_CACHE_DIR": str(root / "cache"),
        "MEDIAGEN_SHARED_PACE": "1" if shared else "0",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    frame = pd.DataFrame(
        {"sku": [f"sku-{i:05d}" for i in range(rows)],
         "caption": [f"item {i} of {root.name}" for i in range(rows)]}
    ).set_index("sku")  # fmt: skip
    ddf = dd.from_pandas(frame, npartitions=workers)  # a partition ends with a poll: one each
    with (
        LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                     dashboard_address=None, host="127.0.0.1", env=env) as cluster,
        Client(cluster),
        mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url,
                        cache_dir=root / "driver") as driver,
    ):  # fmt: skip
        result = mediagen.dask.generate(ddf, model="pixel-1", prompt="{caption}",
                                        run_id=root.name, client=driver)  # fmt: skip
        label = f"dask {workers} workers, " + ("shared pace" if shared else "each alone (fixed)")
        _compute_and_report(label, sandbox, tenant, result, rows, limit)


def _run_machines(sandbox, machines: int, rows: int, limit: float, root: Path) -> None:
    """The table on a Dask cluster of ``machines`` single-process "machines" (each worker has
    a runtime directory of its own, so no two share a pace file, as on separate hosts); nothing
    is known of the limit: the cluster learns it. One line of ratios."""
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, Nanny, Scheduler, SpecCluster

    import mediagen

    tenant = sandbox.new_tenant(balance=10_000_000)
    env = {
        "MEDIAGEN_API_KEY": tenant.api_key,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_CACHE_DIR": str(root / "cache"),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    workers = {
        f"machine-{n}": {"cls": Nanny, "options": {
            "nthreads": 1, "host": "127.0.0.1",
            "env": {**env, "MEDIAGEN_RUNTIME_DIR": str(root / f"machine-{n}")}}}
        for n in range(machines)
    }  # fmt: skip
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": ":0", "host": "127.0.0.1"}}
    frame = pd.DataFrame(
        {"sku": [f"sku-{i:05d}" for i in range(rows)],
         "caption": [f"item {i} of {root.name}" for i in range(rows)]}
    ).set_index("sku")  # fmt: skip
    ddf = dd.from_pandas(frame, npartitions=2 * machines)
    with (
        SpecCluster(workers=workers, scheduler=scheduler) as cluster,
        Client(cluster) as dask_client,
        mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url,
                        cache_dir=root / "driver") as driver,
    ):  # fmt: skip
        dask_client.wait_for_workers(machines)
        result = mediagen.dask.generate(ddf, model="pixel-1", prompt="{caption}",
                                        run_id=root.name, client=driver)  # fmt: skip
        _compute_and_report(f"dask {machines} machines, learned", sandbox, tenant, result,
                            rows, limit)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=20.0)
    parser.add_argument("--change", action="store_true")
    parser.add_argument("--dask", type=int, default=0, metavar="WORKERS")
    parser.add_argument("--machines", type=int, default=0, metavar="MACHINES")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_sandbox(speed=0.0) as sandbox:
        sandbox.admin.set_config(rate_limit_per_second=args.limit,
                                 rate_limit_burst=max(1, int(args.limit)))  # fmt: skip
        if args.machines:
            _run_machines(sandbox, args.machines, args.rows, args.limit, Path(tmp) / "machines")
            return
        if args.dask:
            # the workers' pace file is a fresh one (the shared run must not start from a
            # pace an earlier benchmark left for another key: each run has its own key anyway)
            os.environ["MEDIAGEN_RUNTIME_DIR"] = str(Path(tmp) / "runtime")
            for shared in (True, False):
                root = Path(tmp) / ("dask-shared" if shared else "dask-alone")
                _run_dask(sandbox, args.dask, args.rows, args.limit, root, shared)
            return
        if not args.change:
            for label, known in (("learned from 429s", None), ("told rate_limit=", args.limit)):
                key = sandbox.new_tenant(balance=10_000_000).api_key
                root = Path(tmp) / label.split()[0]
                start, end, tally = _run(sandbox, key, args.rows, root, known)
                _report(label, args.limit, start, end, tally)
            return
        low, high = args.limit / 4, args.limit * 2
        marks: dict[str, float] = {}

        def change_limits(start: float, tally: Tally) -> None:
            def later() -> None:
                time.sleep(15)
                marks["low"] = time.monotonic()
                sandbox.admin.set_config(rate_limit_per_second=low, rate_limit_burst=int(low))
                time.sleep(20)
                marks["high"] = time.monotonic()
                sandbox.admin.set_config(rate_limit_per_second=high, rate_limit_burst=int(high))

            threading.Thread(target=later, daemon=True).start()

        key = sandbox.new_tenant(balance=10_000_000).api_key
        start, end, tally = _run(sandbox, key, args.rows, Path(tmp) / "change", None,
                                 change_limits)  # fmt: skip
        answered, limited = tally.between(start, end + 1)  # the limit moved: no single ratio
        print(f"whole run: 429 share {limited / max(1, answered + limited):.3f} "
              f"({answered + limited} requests)", flush=True)  # fmt: skip
        for name, limit in (("low", low), ("high", high)):
            if name not in marks:
                print(f"the run ended before the limit changed to {limit:g}/s")
                continue
            took = _followed(tally, marks[name], limit, end)
            shown = "never" if took is None else f"{took:.1f} s"
            print(f"followed the limit to {limit:g}/s in {shown} (goal <= 10 s)")


if __name__ == "__main__":
    main()

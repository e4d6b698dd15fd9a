"""Table runs: ``plan.run`` against the loop a user writes by hand, on one sandbox at speed 0.

Prints, in one run (ratios against the baseline measured beside them):

- rows/s of ``plan.run`` over ``--rows`` rows against a hand-written loop of
  ``client.images.create`` + ``generation.wait()`` on a thread pool of the same concurrency
  (both download every output into the client's cache). Goal >= 1.5.
- HTTP requests per row of each (API requests, and every request including media downloads).
  Goal <= 1.2 API requests per row.
- peak memory (the largest resident set, ``ru_maxrss``) of a fresh process that plans and runs
  ``--big`` rows into an ``output_dir`` against one that does ``--rows`` rows. Goal <= 1.5.
  (Resident memory, not tracemalloc: pyarrow's buffers are allocated outside Python's.)

    python benchmarks/bench_batch.py                          # 10,000 rows, 100,000 for memory
    python benchmarks/bench_batch.py --rows 2000 --big 20000 --concurrency 8 --poll 0.1 0.5

With ``--peaks`` it prints only the peak memory of such a process at each size, and each
peak's ratio to the first (the curve a size too long to run here is argued from):

    python benchmarks/bench_batch.py --peaks 10000 20000 50000
    python benchmarks/bench_batch.py --peaks 10000 100000 --speech  # rows the sandbox renders
                                                                     # several times faster: the
                                                                     # same client work per row

Mind the disk: every output is written twice, the sandbox's asset and the run's copy in its
``output_dir`` (a table run keeps no third copy in the client's cache), some 100 KB per image
and 30 KB per speech row (a made-up word of three syllables, as 24 kHz WAV). Each size's
``output_dir`` is deleted once measured; the sandbox's assets stay until the end: 100,000
speech rows after 10,000 took 6.1 GiB in the temporary directory (2.7 in the ``output_dir``,
3.2 the sandbox's, 0.13 the client's journal). Each size prints the disk it used.

With ``--dask`` it prints instead rows/s of ``mediagen.dask.generate`` on a ``LocalCluster`` of
2 worker processes against ``plan.run`` in this one process, over the same ``--rows`` (each
partition, and ``plan.run``, at ``--concurrency``); the cluster's start and the driver's pricing
are timed apart from the run.

    python benchmarks/bench_batch.py --dask --rows 10000
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: the polling of both clients: None is the client's default (what a user gets)
POLL: tuple[float, float] | None = None


def _client(sandbox, api_key: str, cache: Path, counter: Counter):
    import httpx

    import mediagen

    def hook(request: httpx.Request) -> None:
        counter["api" if request.url.path.startswith("/v1/") else "other"] += 1

    http = httpx.Client(timeout=60, event_hooks={"request": [hook]})
    options = {} if POLL is None else {"poll_interval": POLL}
    return mediagen.Client(
        api_key=api_key, base_url=sandbox.base_url, cache_dir=cache, http_client=http, **options
    )


def _frame(rows: int, tag: str):
    import pandas as pd

    return pd.DataFrame({"caption": [f"{tag} product {i}" for i in range(rows)]})


def _plan_run(sandbox, api_key, rows, concurrency, root):
    counter: Counter = Counter()
    client = _client(sandbox, api_key, root / "plan-cache", counter)
    plan = _frame(rows, "plan").mediagen.plan(client, model="pixel-1", prompt="{caption}")
    counter.clear()  # the run, not the pricing
    start = time.perf_counter()
    out = plan.run(run_id="bench", concurrency=concurrency, progress=False)
    elapsed = time.perf_counter() - start
    assert (out["status"] == "completed").all()
    return elapsed, counter


def _hand_loop(sandbox, api_key, rows, concurrency, root):
    counter: Counter = Counter()
    client = _client(sandbox, api_key, root / "loop-cache", counter)
    prompts = list(_frame(rows, "loop")["caption"])

    def one(prompt: str) -> str:
        return str(client.images.create(model="pixel-1", prompt=prompt).wait().status)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        statuses = list(pool.map(one, prompts))
    elapsed = time.perf_counter() - start
    assert set(statuses) == {"completed"}
    return elapsed, counter


_PEAK = """
import resource, sys
import pandas as pd
import mediagen
rows, out, speech = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "speech"
def word(i):  # a made-up word of three syllables per row (343,000 of them), about 0.6 s spoken
    text = ""
    for _ in range(3):
        i, at = divmod(i, 70)
        text += "bdfgklmnprstvz"[at // 5] + "aeiou"[at % 5]
    return text
if speech:
    df = pd.DataFrame({"caption": [word(i) for i in range(rows)]})
    plan = df.mediagen.plan(model="voxa-tts", text="{caption}", output_format="wav_24000")
else:
    df = pd.DataFrame({"caption": [f"{out} product {i}" for i in range(rows)]})
    plan = df.mediagen.plan(model="pixel-1", prompt="{caption}")
result = plan.run(run_id=out.rsplit("/", 1)[-1], output_dir=out, progress=False)
assert (result["status"] == "completed").all()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` (0 when it does not exist)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _peak(sandbox, api_key, rows, root, tag, speech=False):
    """Peak resident bytes of a fresh process planning and running ``rows`` rows (images, or
    with ``speech`` short WAV speech)."""
    env = {
        **os.environ,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_API_KEY": api_key,
        "MEDIAGEN_CACHE_DIR": str(root / f"{tag}-cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(rows), str(root / tag), "speech" if speech else "image"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.strip().splitlines()[-1])


def _dask_run(sandbox, api_key, rows, concurrency, root):
    """Seconds to run ``rows`` on 2 Dask worker processes (compute only), and the seconds the
    cluster took to start and the driver to price the table."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import mediagen

    env = {"MEDIAGEN_API_KEY": api_key, "MEDIAGEN_BASE_URL": sandbox.base_url}
    env["MEDIAGEN_CACHE_DIR"] = str(root / "dask-cache")
    start = time.perf_counter()
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, env=env
        ) as cluster,
        Client(cluster),
    ):
        started = time.perf_counter()
        ddf = dd.from_pandas(_frame(rows, "dask"), npartitions=4)
        driver = mediagen.Client(api_key=api_key, base_url=sandbox.base_url)
        lazy = mediagen.dask.generate(
            ddf, model="pixel-1", prompt="{caption}", run_id="bench-dask", client=driver,
            concurrency=concurrency,
        )  # fmt: skip
        planned = time.perf_counter()
        out = lazy.compute()
        done = time.perf_counter()
    assert (out["status"] == "completed").all()
    return done - planned, started - start, planned - started


def dask_main(args) -> None:
    from mediagen_sandbox.testing import running_sandbox

    with tempfile.TemporaryDirectory() as tmp, running_sandbox(speed=0.0) as sandbox:
        root = Path(tmp)
        key = sandbox.new_tenant(balance=10_000_000).api_key
        plan_s, _ = _plan_run(sandbox, key, args.rows, args.concurrency, root)
        dask_s, start_s, price_s = _dask_run(sandbox, key, args.rows, args.concurrency, root)
        print(f"{args.rows} rows, concurrency {args.concurrency} per process")
        print(f"  plan.run, one process : {args.rows / plan_s:8.1f} rows/s")
        print(f"  Dask, 2 workers       : {args.rows / dask_s:8.1f} rows/s "
              f"(not counted: cluster start {start_s:.1f} s, pricing {price_s:.1f} s)")  # fmt: skip
        print(f"  rows/s ratio Dask / plan.run: {plan_s / dask_s:.2f}")


def peaks_main(sizes: list[int], speech: bool) -> None:
    from mediagen_sandbox.testing import running_sandbox

    with tempfile.TemporaryDirectory() as tmp, running_sandbox(speed=0.0) as sandbox:
        root = Path(tmp)
        key = sandbox.new_tenant(balance=10_000_000).api_key
        first = None
        for rows in sizes:
            start = time.perf_counter()
            tag = f"peak-{rows}"
            peak = _peak(sandbox, key, rows, root, tag, speech)
            first = first or peak
            print(f"  {rows:>7} rows: peak memory {peak / 2**20:7.1f} MiB, "
                  f"ratio to {sizes[0]} rows {peak / first:.2f} "
                  f"({rows / (time.perf_counter() - start):.1f} rows/s)", flush=True)  # fmt: skip
            print(f"           disk: output_dir {_size(root / tag) / 2**30:.2f} GiB, cache "
                  f"{_size(root / f'{tag}-cache') / 2**20:.1f} MiB, sandbox (all sizes so far) "
                  f"{_size(sandbox.data_dir) / 2**30:.2f} GiB", flush=True)  # fmt: skip
            shutil.rmtree(root / tag, ignore_errors=True)
            shutil.rmtree(root / f"{tag}-cache", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--dask", action="store_true", help="Dask, 2 workers, vs plan.run")
    parser.add_argument(
        "--peaks", type=int, nargs="+", default=None, metavar="ROWS",
        help="only the peak memory of a fresh process at each size",
    )  # fmt: skip
    parser.add_argument(
        "--speech", action="store_true",
        help="--peaks rows are a short word of WAV speech (voxa-tts), rendered faster than images",
    )  # fmt: skip
    parser.add_argument(
        "--poll", type=float, nargs=2, default=None, metavar=("START", "CAP"),
        help="both clients' poll_interval (default: the client's own)",
    )  # fmt: skip
    args = parser.parse_args()
    global POLL
    POLL = None if args.poll is None else (args.poll[0], args.poll[1])
    if args.dask:
        dask_main(args)
        return
    if args.peaks:
        peaks_main(args.peaks, args.speech)
        return
    from mediagen_sandbox.testing import running_sandbox

    with tempfile.TemporaryDirectory() as tmp, running_sandbox(speed=0.0) as sandbox:
        root = Path(tmp)
        key = sandbox.new_tenant(balance=10_000_000).api_key
        loop_s, loop_n = _hand_loop(sandbox, key, args.rows, args.concurrency, root)
        plan_s, plan_n = _plan_run(sandbox, key, args.rows, args.concurrency, root)
        polling = "the client's default" if POLL is None else f"{POLL}"
        print(f"{args.rows} rows, concurrency {args.concurrency}, polling {polling}")
        print(f"  hand loop : {args.rows / loop_s:8.1f} rows/s, "
              f"{loop_n['api'] / args.rows:.2f} API + {loop_n['other'] / args.rows:.2f} "
              "media requests/row")  # fmt: skip
        print(f"  plan.run  : {args.rows / plan_s:8.1f} rows/s, "
              f"{plan_n['api'] / args.rows:.2f} API + {plan_n['other'] / args.rows:.2f} "
              "media requests/row")  # fmt: skip
        print(f"  rows/s ratio plan.run / hand loop: {loop_s / plan_s:.2f} (goal >= 1.5)")
        if args.big <= 0:  # --big 0: the speed and requests only
            return
        small = _peak(sandbox, key, args.rows, root, "small")
        big = _peak(sandbox, key, args.big, root, "big")
        print(f"  peak memory {args.rows} rows {small / 2**20:.1f} MiB, {args.big} rows "
              f"{big / 2**20:.1f} MiB: ratio {big / small:.2f} (goal <= 1.5)")  # fmt: skip


if __name__ == "__main__":
    main()

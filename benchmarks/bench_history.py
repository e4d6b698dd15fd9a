"""History benchmark: fetching, storing and querying N generations (100k by default).

Prints, for N generations served by the sandbox over loopback (seeded through the admin seed
endpoint), as ratios measured in the same run:

- ``to_dataframe(store=False)`` (a full fetch) against a plain loop over the same pages
  (``httpx.Client.get`` at the largest page size, ``.json()``, one ``pd.json_normalize`` at the
  end): time (goal <= 1.0) and peak memory (goal <= 1.5);
- a first ``to_dataframe()`` into an empty history store against the same plain loop
  (goal <= 0.8);
- reopening a synced store after 100 new generations (``to_dataframe()``: sync + read) against
  the full fetch (goal <= 0.05);
- spend by model by day: peak memory of DuckDB SQL over the store against building today's
  full DataFrame and grouping it (goal <= 0.25).

Each measurement runs in a fresh child process (so one run's heap cannot flatter the next);
memory is the child's peak RSS (``ru_maxrss``) minus its RSS after the imports, which counts
pyarrow and numpy buffers that ``tracemalloc`` would miss. Runs alternate and the median is
reported.

    python benchmarks/bench_history.py                 # starts a sandbox, seeds 100k
    python benchmarks/bench_history.py --n 20000 --repeats 1
    python benchmarks/bench_history.py --base-url URL  # an existing server; key in MEDIAGEN_API_KEY
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

PAGE_SIZE = 100


def _rss_bytes() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _baseline(base_url: str, api_key: str) -> int:
    import httpx
    import pandas as pd

    records: list[dict] = []
    params: dict = {"limit": PAGE_SIZE}
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
    ) as http:
        while True:
            response = http.get("/v1/generations", params=params)
            response.raise_for_status()
            page = response.json()
            records.extend(page["data"])
            if not page.get("next_cursor"):
                break
            params = {"limit": PAGE_SIZE, "after": page["next_cursor"]}
    frame = pd.json_normalize(records)
    return len(frame)


SPEND_SQL = (
    "SELECT model, date_trunc('day', created_at) AS day, sum(credits_charged) AS spent "
    "FROM generations GROUP BY ALL"
)


def _client(base_url: str, api_key: str):
    import mediagen

    return mediagen.Client(api_key=api_key, base_url=base_url, cache_dir=os.environ["BENCH_CACHE"])


def _first_sync(base_url: str, api_key: str) -> int:
    with _client(base_url, api_key) as client:
        return len(client.generations.to_dataframe(rebuild=True))


def _reopen(base_url: str, api_key: str) -> int:
    with _client(base_url, api_key) as client:
        return len(client.generations.to_dataframe())


def _frame_spend(base_url: str, api_key: str) -> int:
    with _client(base_url, api_key) as client:
        frame = client.generations.to_dataframe(store=False)
        day = frame["created_at"].dt.floor("D")
        return len(frame.groupby([frame["model"], day], observed=True)["credits_charged"].sum())


def _sql_spend(base_url: str, api_key: str) -> int:
    from mediagen.history import sql

    with _client(base_url, api_key) as client:
        return len(sql(SPEND_SQL, client, sync=False))


def _history(base_url: str, api_key: str) -> int:
    import mediagen

    client_class = getattr(mediagen, "Client", None)
    if client_class is not None:
        with client_class(api_key=api_key, base_url=base_url) as client:
            return len(client.generations.to_dataframe(store=False))
    # Before the client exists: the same reduction over a raw httpx page source.
    import httpx

    from mediagen.history import generations_frame

    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
    ) as http:

        def page(query):
            response = http.get("/v1/generations", params=query)
            response.raise_for_status()
            return response.json()

        return len(generations_frame(page, journal=None))


def child(mode: str, base_url: str) -> None:
    """Run one measurement and print it as JSON (the parent parses the last line)."""
    import duckdb  # noqa: F401  imports are not part of what is measured
    import httpx  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import mediagen.history._frame

    with contextlib.suppress(ImportError):
        import mediagen.client  # noqa: F401
    api_key = os.environ["MEDIAGEN_API_KEY"]
    before = _rss_bytes()
    start = time.perf_counter()
    rows = MODES[mode](base_url, api_key)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(json.dumps({"mode": mode, "rows": rows, "seconds": seconds, "peak": peak - before}))


MODES = {
    "baseline": _baseline,
    "history": _history,
    "first_sync": _first_sync,
    "reopen": _reopen,
    "frame_spend": _frame_spend,
    "sql_spend": _sql_spend,
}


def _measure(mode: str, base_url: str, api_key: str, cache: str = "") -> dict:
    env = {**os.environ, "MEDIAGEN_API_KEY": api_key, "BENCH_CACHE": cache}
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--base-url", base_url],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{mode} run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def seeded_sandbox(n: int) -> Iterator[tuple[str, str]]:
    """A fresh sandbox holding ``n`` generations of one member: yields (base_url, api_key)."""
    from mediagen_sandbox.testing import running_sandbox

    with running_sandbox() as sandbox:
        tenant = sandbox.admin.create_tenant(balance=10**9)
        sandbox.admin.configure(rate_limit_per_minute=10**9)
        started = time.perf_counter()
        # A settled history, as a real one is but for its newest jobs (a seeded pending row
        # would stay pending forever).
        sandbox.admin.seed_generations(
            tenant.member_id, n, completed_fraction=0.9, failed_fraction=0.1
        )
        print(f"seeded {n} generations in {time.perf_counter() - started:.1f} s")

        def add(count: int) -> None:
            sandbox.admin.seed_generations(
                tenant.member_id,
                count,
                start=_now_iso(),
                interval_seconds=0.001,
                completed_fraction=0.9,
                failed_fraction=0.1,
            )

        yield sandbox.base_url, tenant.api_key, add


def _now_iso() -> str:
    import datetime as dt

    return dt.datetime.now(dt.timezone.utc).isoformat()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="generations to seed")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base-url", help="use this running server (key in MEDIAGEN_API_KEY)")
    parser.add_argument("--child", choices=sorted(MODES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.base_url)
        return

    if args.base_url:
        server = contextlib.nullcontext((args.base_url, os.environ["MEDIAGEN_API_KEY"], None))
    else:
        server = seeded_sandbox(args.n)
    with server as (base_url, api_key, add), tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, list[dict]] = {m: [] for m in MODES}
        for i in range(args.repeats):
            for mode in ("baseline", "history", "first_sync"):
                runs[mode].append(_measure(mode, base_url, api_key, f"{tmp}/first-{i}"))
        if add is not None:
            kept = f"{tmp}/kept"
            _measure("first_sync", base_url, api_key, kept)
            for _ in range(args.repeats):
                add(100)
                runs["reopen"].append(_measure("reopen", base_url, api_key, kept))
            for _ in range(args.repeats):
                runs["frame_spend"].append(_measure("frame_spend", base_url, api_key, kept))
                runs["sql_spend"].append(_measure("sql_spend", base_url, api_key, kept))
    _report(runs, args.repeats)


def _report(runs: dict[str, list[dict]], repeats: int) -> None:
    runs = {m: r for m, r in runs.items() if r}
    seconds = {m: statistics.median(r["seconds"] for r in runs[m]) for m in runs}
    peak = {m: statistics.median(r["peak"] for r in runs[m]) for m in runs}
    rows = sorted({r["rows"] for m in runs for r in runs[m]})
    print(f"median of {repeats} runs each (rows per run: {rows})")
    for mode in runs:
        spread = [r["seconds"] for r in runs[mode]]
        print(
            f"  {mode:11s} {seconds[mode]:7.2f} s ({min(spread):.2f}..{max(spread):.2f})"
            f"   peak +{peak[mode] / 2**20:7.1f} MiB"
        )
    ratio = seconds["history"] / seconds["baseline"]
    memory = peak["history"] / peak["baseline"]
    print(
        f"full fetch / httpx+json_normalize: time {ratio:.2f} (goal <= 1.0), "
        f"peak memory {memory:.2f} (goal <= 1.5)"
    )
    first = seconds["first_sync"] / seconds["baseline"]
    print(f"first sync into the store / httpx+json_normalize: time {first:.2f} (goal <= 0.8)")
    if "reopen" in seconds:
        reopen = seconds["reopen"] / seconds["history"]
        print(f"reopen synced store + 100 new / full fetch: time {reopen:.3f} (goal <= 0.05)")
        spend = peak["sql_spend"] / peak["frame_spend"]
        print(
            f"spend by model by day, SQL over the store / full DataFrame: peak memory "
            f"{spend:.2f} (goal <= 0.25)"
        )


if __name__ == "__main__":
    main()

"""SQL beyond memory: "spend by model by week" over 1M and 10M stored generations.

A history store of N synthetic generations (the store's own Parquet layout and schema, written
in chunks so making it stays small) is queried in a fresh child process by
``HistoryStore.sql`` (DuckDB over the files). Printed per size: time and peak RSS above the
child's RSS after its imports, and, where it fits in memory, the same answer from pandas after
loading the whole store (``HistoryStore.frame()``) as the baseline. Goal: DuckDB's peak memory
stays bounded (roughly flat from 1M to 10M) while pandas' grows with N.

    python benchmarks/bench_history_sql.py                  # 1M and 10M (about 1.5 GB on disk)
    python benchmarks/bench_history_sql.py --sizes 100000 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

QUERY = (
    "SELECT model, date_trunc('week', created_at) AS week, sum(credits_charged) AS spent, "
    "count(*) AS n FROM generations GROUP BY ALL ORDER BY week, model"
)
CHUNK = 1_000_000
MODELS = ["pixel-1", "pixel-pro", "lumen-4k", "vidra-2", "voxa-tts", "tunesmith"]


def make_store(root: str, n: int) -> None:
    """Write ``n`` synthetic settled generations as store segments of up to ``CHUNK`` rows."""
    import numpy as np
    import pandas as pd

    from mediagen.history import HistoryStore
    from mediagen.history._schema import apply_history_dtypes
    from mediagen.history._store import table_of

    store = HistoryStore(root)
    rng = np.random.default_rng(0)
    end = pd.Timestamp("2026-11-01", tz="UTC")
    written = 0
    for number in range((n + CHUNK - 1) // CHUNK):
        size = min(CHUNK, n - written)
        created = end - pd.to_timedelta(np.arange(written, written + size) * 3, unit="s")
        latency = rng.uniform(5, 120, size)
        failed = rng.random(size) < 0.1
        frame = pd.DataFrame(
            {
                "id": [f"gen-{i:010d}" for i in range(written, written + size)],
                "type": "image",
                "status": np.where(failed, "failed", "completed"),
                "model": rng.choice(MODELS, size),
                "mode": "default",
                "prompt": "a lighthouse at dusk",
                "created_at": created,
                "completed_at": created + pd.to_timedelta(latency, unit="s"),
                "latency_s": latency,
                "credits_charged": np.where(failed, np.nan, rng.choice([1.0, 2.0, 8.0], size)),
                "error_code": np.where(failed, "provider_error", None),
                "error_message": None,
                "n_outputs": np.where(failed, 0, 1),
                "output_seconds": np.nan,
                "width": 1024,
                "height": 1024,
                "idempotency_key": None,
            }
        )
        frame = apply_history_dtypes(frame)
        store._write_table(store.root / "settled" / f"part-{number:06d}.parquet", table_of(frame))
        written += size
    store._write_state({"since": end.isoformat(), "resume": None, "synced": True})


def child(mode: str, root: str) -> None:
    import duckdb  # noqa: F401  imports are not part of what is measured
    import pandas as pd

    from mediagen.history import HistoryStore

    store = HistoryStore(root)
    before = _rss()
    start = time.perf_counter()
    if mode == "sql":
        rows = len(store.sql(QUERY))
    else:
        frame = store.frame()
        week = frame["created_at"].dt.tz_convert("UTC").dt.to_period("W")
        rows = len(frame.groupby([frame["model"], week], observed=True)["credits_charged"].sum())
        del pd
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"rows": rows, "seconds": seconds, "peak": peak - before}))


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _run_child(arguments: list[str]) -> str:
    out = subprocess.run(
        [sys.executable, __file__, *arguments], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return out.stdout


def _measure(mode: str, root: str) -> dict:
    return json.loads(_run_child(["--child", mode, "--root", root]).strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--pandas-up-to", type=int, default=1_000_000)
    parser.add_argument("--child", choices=["sql", "pandas"], help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--make", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make:
        make_store(args.root, args.make)
        return
    if args.child:
        child(args.child, args.root)
        return
    results = {}
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as root:
            started = time.perf_counter()
            # In a child of its own: Linux keeps a process's peak RSS across exec, so a parent
            # that had built the store itself would pass its peak on to every measured child.
            _run_child(["--make", str(n), "--root", root])
            size = sum(
                os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs
            )
            print(
                f"{n:>11,} rows: store made in {time.perf_counter() - started:.1f} s, "
                f"{size / 2**20:.0f} MiB on disk"
            )
            results[n] = {"sql": _measure("sql", root)}
            if n <= args.pandas_up_to:
                results[n]["pandas"] = _measure("pandas", root)
        for mode, r in results[n].items():
            print(
                f"  {mode:6s} {r['seconds']:7.2f} s   peak +{r['peak'] / 2**20:8.1f} MiB "
                f"({r['rows']} groups)"
            )
        if "pandas" in results[n]:
            ratio = results[n]["sql"]["peak"] / results[n]["pandas"]["peak"]
            print(f"  SQL / pandas peak memory: {ratio:.2f}")
    sizes = sorted(results)
    if len(sizes) > 1:
        small, large = results[sizes[0]]["sql"], results[sizes[-1]]["sql"]
        print(
            f"SQL peak memory at {sizes[-1]:,} / at {sizes[0]:,} rows: "
            f"{large['peak'] / small['peak']:.2f} (rows x{sizes[-1] / sizes[0]:.0f}); "
            f"time x{large['seconds'] / small['seconds']:.1f}"
        )


if __name__ == "__main__":
    main()

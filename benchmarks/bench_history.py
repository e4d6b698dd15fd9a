"""History benchmark: ``to_dataframe`` of 100k generations against httpx + pd.json_normalize.

Prints, for N generations served by the sandbox over loopback (seeded through the admin seed
endpoint), the time and the peak memory of ``client.generations.to_dataframe()`` as ratios to a
plain loop over the same pages: ``httpx.Client.get`` at the largest page size, ``.json()``,
collect the items, one ``pd.json_normalize`` at the end. Goals: time <= 1.0, memory <= 1.5.

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


def _history(base_url: str, api_key: str) -> int:
    import mediagen

    client_class = getattr(mediagen, "Client", None)
    if client_class is not None:
        with client_class(api_key=api_key, base_url=base_url) as client:
            return len(client.generations.to_dataframe())
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
    import httpx  # noqa: F401  imports are not part of what is measured
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import mediagen.history._frame

    with contextlib.suppress(ImportError):
        import mediagen.client  # noqa: F401
    api_key = os.environ["MEDIAGEN_API_KEY"]
    before = _rss_bytes()
    start = time.perf_counter()
    rows = (_history if mode == "history" else _baseline)(base_url, api_key)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    print(json.dumps({"mode": mode, "rows": rows, "seconds": seconds, "peak": peak - before}))


def _measure(mode: str, base_url: str, api_key: str) -> dict:
    env = {**os.environ, "MEDIAGEN_API_KEY": api_key}
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
        sandbox.admin.seed_generations(tenant.member_id, n)
        print(f"seeded {n} generations in {time.perf_counter() - started:.1f} s")
        yield sandbox.base_url, tenant.api_key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="generations to seed")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base-url", help="use this running server (key in MEDIAGEN_API_KEY)")
    parser.add_argument("--child", choices=["history", "baseline"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.base_url)
        return

    if args.base_url:
        server = contextlib.nullcontext((args.base_url, os.environ["MEDIAGEN_API_KEY"]))
    else:
        server = seeded_sandbox(args.n)
    with server as (base_url, api_key):
        runs: dict[str, list[dict]] = {"baseline": [], "history": []}
        for _ in range(args.repeats):
            for mode in ("baseline", "history"):
                runs[mode].append(_measure(mode, base_url, api_key))
    rows = {run["rows"] for mode in runs for run in runs[mode]}
    seconds = {m: statistics.median(r["seconds"] for r in runs[m]) for m in runs}
    peak = {m: statistics.median(r["peak"] for r in runs[m]) for m in runs}
    print(f"rows per run: {sorted(rows)}; median of {args.repeats} runs each")
    for mode in ("baseline", "history"):
        print(f"  {mode:9s} {seconds[mode]:7.2f} s   peak +{peak[mode] / 2**20:7.1f} MiB")
    print(
        f"to_dataframe / httpx+json_normalize: time {seconds['history'] / seconds['baseline']:.2f}"
        f" (goal <= 1.0), peak memory {peak['history'] / peak['baseline']:.2f} (goal <= 1.5)"
    )


if __name__ == "__main__":
    main()

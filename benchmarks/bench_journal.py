"""The request journal's size after N real submissions, before and after a compaction.

N image submits to a sandbox at speed 0, each waited for (so each leaves its attempt,
submitted and finished records), then one compaction as it would run once they are older than
the client's ``journal_keep_days``. Prints the journal's size before, the journal's and the
settled file's sizes after, the time the compaction took, and what ``pending()`` (read when a
studio or ``resume()`` starts) costs on the journal before and after, as a ratio.

    python benchmarks/bench_journal.py
    python benchmarks/bench_journal.py --submits 2000
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
from pathlib import Path


def _timed(call, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submits", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=50)
    args = parser.parse_args()

    import mediagen
    from mediagen.local import _compaction as compaction
    from mediagen.local._journal import Journal, settled_path
    from mediagen_sandbox.testing import running_sandbox

    with running_sandbox(speed=0) as sandbox, tempfile.TemporaryDirectory() as cache:
        tenant = sandbox.new_tenant(balance=1_000_000)
        path = Path(cache) / "journal.jsonl"
        with mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=cache,
                             journal=path, download=False) as client:  # fmt: skip
            made = 0
            while made < args.submits:
                count = min(args.batch, args.submits - made)
                gens = [
                    client.images.create(model="pixel-1", prompt=f"a lighthouse at dusk, take {i}")
                    for i in range(made, made + count)
                ]
                list(client.generations.watch(gens, timeout=600, poll_interval=0.05))
                made += count
        before = path.stat().st_size
        pending_before = _timed(lambda: Journal(path).pending())
        later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=compaction.DEFAULT_KEEP_DAYS)
        started = time.perf_counter()
        done = compaction.compact(Journal(path), now=later + dt.timedelta(days=1))
        took = time.perf_counter() - started
        pending_after = _timed(lambda: Journal(path).pending())
        settled = settled_path(path).stat().st_size
    print(f"{args.submits} submits: journal {before / 1024:.0f} KiB before compaction")
    print(
        f"after: journal {done.bytes_after / 1024:.1f} KiB, settled file {settled / 1024:.0f} "
        f"KiB ({done.folded} generations folded; journal + settled = "
        f"{(done.bytes_after + settled) / before:.0%} of before); compaction took {took:.2f} s"
    )
    print(f"pending() after / before: {pending_after / pending_before:.2f}")


if __name__ == "__main__":
    main()

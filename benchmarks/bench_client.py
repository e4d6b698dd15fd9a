"""Client benchmark: import time and per-call overhead, as ratios to httpx in the same run.

Prints:

- ``import mediagen`` against ``import httpx``: each in a fresh interpreter, best of N.
- 2000 ``client.generations.get(id)`` against 2000 ``httpx.Client.get`` + ``.json()`` on the
  same sandbox, same generation, same connection reuse; runs alternate, best of R. Goal <= 1.15.

    python benchmarks/bench_client.py                  # starts a sandbox
    python benchmarks/bench_client.py --calls 500 --repeats 3
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time


def _import_time(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return float(out.stdout.strip())


def _raw_gets(base_url: str, api_key: str, gid: str, calls: int) -> float:
    import httpx

    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=60
    ) as http:
        http.get(f"/v1/generations/{gid}").json()  # warm the connection
        start = time.perf_counter()
        for _ in range(calls):
            response = http.get(f"/v1/generations/{gid}")
            response.raise_for_status()
            response.json()
        return time.perf_counter() - start


def _client_gets(base_url: str, api_key: str, gid: str, calls: int, cache: str) -> float:
    import mediagen

    with mediagen.Client(api_key=api_key, base_url=base_url, cache_dir=cache) as client:
        client.generations.get(gid)
        start = time.perf_counter()
        for _ in range(calls):
            client.generations.get(gid)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--imports", type=int, default=7)
    args = parser.parse_args()

    httpx_import = min(_import_time("httpx") for _ in range(args.imports))
    mediagen_import = min(_import_time("mediagen") for _ in range(args.imports))
    print(f"import httpx     best of {args.imports}: {httpx_import * 1000:7.1f} ms")
    print(f"import mediagen  best of {args.imports}: {mediagen_import * 1000:7.1f} ms")
    print(f"import ratio mediagen / httpx: {mediagen_import / httpx_import:.2f}")

    from mediagen_sandbox.testing import running_sandbox

    with running_sandbox(speed=0.0) as sandbox:
        tenant = sandbox.new_tenant(balance=1000)
        # rate limits are per key; make room so the benchmark measures the client, not 429s
        sandbox.admin.set_config(rate_limit_per_second=100000, rate_limit_burst=100000)
        import mediagen

        with tempfile.TemporaryDirectory() as cache:
            with mediagen.Client(
                api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=cache
            ) as client:
                entry = client.models.get("pixel-1")
                gen = client.images.create(**entry.example())
                gid = client.generations.wait(gen, timeout=60, poll_interval=0.05).id
            raw, ours = [], []
            for _ in range(args.repeats):
                raw.append(_raw_gets(sandbox.base_url, tenant.api_key, gid, args.calls))
                ours.append(_client_gets(sandbox.base_url, tenant.api_key, gid, args.calls, cache))
    best_raw, best_ours = min(raw), min(ours)
    print(f"{args.calls} GET /v1/generations/{{id}}, best of {args.repeats}:")
    print(f"  raw httpx.Client : {best_raw:6.3f} s ({best_raw / args.calls * 1e6:6.0f} us/call)")
    print(f"  mediagen.Client  : {best_ours:6.3f} s ({best_ours / args.calls * 1e6:6.0f} us/call)")
    print(f"overhead ratio mediagen / httpx: {best_ours / best_raw:.3f} (goal <= 1.15)")


if __name__ == "__main__":
    main()

"""Client benchmark: import time and per-call overhead, as ratios to httpx in the same run.

Prints:

- ``import mediagen`` against ``import httpx``: each in a fresh interpreter, best of N.
- 2000 ``client.generations.get(id)`` against 2000 ``httpx.Client.get`` + ``.json()`` on the
  same sandbox, same generation, same connection reuse; runs alternate, best of R. Goal <= 1.15.
- Requests spent by ``client.generations.watch`` on 500 pending generations, against a naive
  loop doing one GET per pending job per round over another 500 made alike. Goal <= 0.1.
- ``client.uploads.upload(path)`` of a 256 MiB file against a raw httpx streaming PUT of the same
  file (same registration), as a throughput ratio (goal >= 0.9), with each one's peak Python
  memory (tracemalloc).

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


def _count_requests(counter: list[str]):
    import httpx

    def hook(request: httpx.Request) -> None:
        counter.append(request.url.path)

    return httpx.Client(timeout=60, event_hooks={"request": [hook]})


def _submit_slow(client, n: int, seconds: int) -> list:
    body = {"model": "pixel-1", "prompt": f"watch me [[slow:{seconds}]]"}
    return [client.images.create(**body) for _ in range(n)]


def _watch_ratio(sandbox, tenant, cache: str, jobs: int, seconds: int, interval: float) -> None:
    import mediagen

    counted: list[str] = []
    with mediagen.Client(
        api_key=tenant.api_key,
        base_url=sandbox.base_url,
        cache_dir=cache,
        http_client=_count_requests(counted),
        download=False,
    ) as client:
        gens = _submit_slow(client, jobs, seconds)
        counted.clear()
        done = sum(1 for _ in client.generations.watch(gens, poll_interval=interval, timeout=120))
        watch_requests = len(counted)
        naive = _submit_slow(client, jobs, seconds)
        counted.clear()
        pending = {g.id for g in naive}
        while pending:
            for gid in list(pending):
                if client.generations.get(gid).status != "pending":
                    pending.discard(gid)
            if pending:
                time.sleep(interval)
        naive_requests = len(counted)
    print(f"watch {jobs} pending generations ({done} finished, each ~{seconds} s):")
    print(f"  generations.watch : {watch_requests:6d} requests")
    print(f"  one GET per job   : {naive_requests:6d} requests")
    print(f"requests ratio watch / naive: {watch_requests / naive_requests:.3f} (goal <= 0.1)")


def _upload_ratio(sandbox, tenant, cache: str, mib: int) -> None:
    import os
    import tracemalloc

    import httpx

    import mediagen

    path = os.path.join(cache, "big.wav")
    _write_wav(path, mib << 20)
    size = os.path.getsize(path)
    headers = {"Authorization": f"Bearer {tenant.api_key}"}

    def raw() -> float:
        with httpx.Client(base_url=sandbox.base_url, headers=headers, timeout=600) as http:
            ticket = http.post(
                "/v1/uploads",
                json={"filename": "big.wav", "content_type": "audio/wav", "size_bytes": size},
            ).json()
            start = time.perf_counter()
            with open(path, "rb") as f, httpx.Client(timeout=600) as plain:
                chunks = iter(lambda: f.read(1 << 20), b"")
                r = plain.put(
                    ticket["upload_url"], content=chunks, headers=ticket["required_headers"]
                )
                r.raise_for_status()
            return time.perf_counter() - start

    def ours() -> float:
        with mediagen.Client(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=cache, timeout=600
        ) as client:
            start = time.perf_counter()
            client.uploads.upload(path)
            return time.perf_counter() - start

    results = {}
    for name, run in (("raw", raw), ("ours", ours), ("raw", raw), ("ours", ours)):
        tracemalloc.start()
        seconds = run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        best = results.get(name)
        if best is None or seconds < best[0]:
            results[name] = (seconds, peak)
    (raw_s, raw_peak), (our_s, our_peak) = results["raw"], results["ours"]
    print(f"upload {mib} MiB, best of 2 (peak Python memory):")
    print(f"  raw httpx streaming PUT: {mib / raw_s:7.1f} MiB/s  ({raw_peak / 2**20:5.1f} MiB)")
    print(f"  client.uploads.upload  : {mib / our_s:7.1f} MiB/s  ({our_peak / 2**20:5.1f} MiB)")
    print(f"throughput ratio mediagen / raw: {raw_s / our_s:.2f} (goal >= 0.9)")


def _write_wav(path: str, size: int) -> None:
    """A valid PCM WAV of ``size`` bytes (silence), written sparsely."""
    import struct

    data = size - 44
    header = b"RIFF" + struct.pack("<I", size - 8) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 1, 1, 44100, 88200, 2, 16) + b"data"
    header += struct.pack("<I", data)
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--imports", type=int, default=7)
    parser.add_argument("--watch-jobs", type=int, default=500)
    parser.add_argument("--upload-mib", type=int, default=256)
    args = parser.parse_args()

    httpx_import = min(_import_time("httpx") for _ in range(args.imports))
    mediagen_import = min(_import_time("mediagen") for _ in range(args.imports))
    print(f"import httpx     best of {args.imports}: {httpx_import * 1000:7.1f} ms")
    print(f"import mediagen  best of {args.imports}: {mediagen_import * 1000:7.1f} ms")
    print(f"import ratio mediagen / httpx: {mediagen_import / httpx_import:.2f}")

    from mediagen_sandbox.testing import running_sandbox

    with running_sandbox(speed=0.0) as sandbox:
        tenant = sandbox.new_tenant(balance=100_000)
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
            _report_gets(args, raw, ours)
            _watch_ratio(sandbox, tenant, cache, args.watch_jobs, seconds=4, interval=0.5)
            _upload_ratio(sandbox, tenant, cache, args.upload_mib)


def _report_gets(args, raw: list[float], ours: list[float]) -> None:
    best_raw, best_ours = min(raw), min(ours)
    print(f"{args.calls} GET /v1/generations/{{id}}, best of {args.repeats}:")
    print(f"  raw httpx.Client : {best_raw:6.3f} s ({best_raw / args.calls * 1e6:6.0f} us/call)")
    print(f"  mediagen.Client  : {best_ours:6.3f} s ({best_ours / args.calls * 1e6:6.0f} us/call)")
    print(f"overhead ratio mediagen / httpx: {best_ours / best_raw:.3f} (goal <= 1.15)")


if __name__ == "__main__":
    main()

"""Client benchmark: import time and per-call overhead, as ratios to httpx in the same run.

Prints:

Every timing is reported as the median of its runs with the spread (min..max) beside it.

- ``import mediagen`` + constructing a ``mediagen.Client`` against ``import httpx`` + constructing
  an ``httpx.Client``: each in a fresh interpreter (what a user pays before the first request).
- 2000 ``client.generations.get(id)`` against 2000 ``httpx.Client.get`` + ``.json()`` on the
  same sandbox, same generation, same connection reuse; runs alternate. Goal <= 1.15.
- Requests spent by ``client.generations.watch`` (its default polling) on 500 pending
  generations, against the naive loop a user writes from the spec: one GET per pending job,
  rounds 2 s apart (the spec's shortest polling interval), over another 500 made alike.
  Goal <= 0.1.
- ``client.uploads.upload(path)`` of a 256 MiB file against a raw httpx streaming PUT of the same
  file (same registration), as a throughput ratio (goal >= 0.9), with each one's peak Python
  memory (tracemalloc).

    python benchmarks/bench_client.py                  # starts a sandbox
    python benchmarks/bench_client.py --calls 500 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

_STARTUP = {
    "httpx": "import httpx; c = httpx.Client(base_url='http://127.0.0.1:9')",
    "mediagen": "import mediagen; c = mediagen.Client(api_key='k', base_url='http://127.0.0.1:9')",
}


def _spread(values: list[float], scale: float = 1.0, unit: str = "s") -> str:
    """Median and range: the machines here are noisy, so one number alone would mislead."""
    med = statistics.median(values) * scale
    return f"median {med:8.3f} {unit} ({min(values) * scale:.3f}..{max(values) * scale:.3f})"


def _startup_time(module: str) -> float:
    """Import and construct a client in a fresh interpreter; no request is made."""
    code = (
        f"import time; t = time.perf_counter(); {_STARTUP[module]}; print(time.perf_counter() - t)"
    )
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
    """``watch`` with its own default polling against a per-job loop polling every ``interval``."""
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
        done = sum(1 for _ in client.generations.watch(gens, timeout=300))
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
    print(f"  generations.watch (default polling): {watch_requests:6d} requests")
    print(f"  one GET per job, every {interval:g} s     : {naive_requests:6d} requests")
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

    times: dict[str, list[float]] = {"raw": [], "ours": []}
    peaks: dict[str, int] = {"raw": 0, "ours": 0}
    for name, run in (("raw", raw), ("ours", ours)) * 3:
        tracemalloc.start()
        times[name].append(run())
        peaks[name] = max(peaks[name], tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    raw_s, our_s = statistics.median(times["raw"]), statistics.median(times["ours"])
    print(f"upload {mib} MiB, 3 alternating runs each (peak Python memory):")
    print(f"  raw httpx streaming PUT: {_spread(times['raw'])}  ({peaks['raw'] / 2**20:5.1f} MiB)")
    print(
        f"  client.uploads.upload  : {_spread(times['ours'])}  ({peaks['ours'] / 2**20:5.1f} MiB)"
    )
    print(f"throughput ratio mediagen / raw (medians): {raw_s / our_s:.2f} (goal >= 0.9)")


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

    startup: dict[str, list[float]] = {"httpx": [], "mediagen": []}
    for _ in range(args.imports):
        for module in startup:
            startup[module].append(_startup_time(module))
    n = args.imports
    labels = {"httpx": "httpx + httpx.Client()", "mediagen": "mediagen + mediagen.Client()"}
    for module, label in labels.items():
        print(f"import {label:28} ({n} runs): {_spread(startup[module], 1000, 'ms')}")
    ratio = statistics.median(startup["mediagen"]) / statistics.median(startup["httpx"])
    print(f"startup ratio mediagen / httpx (medians): {ratio:.2f}")

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
            _watch_ratio(sandbox, tenant, cache, args.watch_jobs, seconds=8, interval=2.0)
            _upload_ratio(sandbox, tenant, cache, args.upload_mib)


def _report_gets(args, raw: list[float], ours: list[float]) -> None:
    print(f"{args.calls} GET /v1/generations/{{id}}, {args.repeats} alternating runs each:")
    print(f"  raw httpx.Client : {_spread(raw)}")
    print(f"  mediagen.Client  : {_spread(ours)}")
    ratio = statistics.median(ours) / statistics.median(raw)
    print(f"overhead ratio mediagen / httpx (medians): {ratio:.3f} (goal <= 1.15)")


if __name__ == "__main__":
    main()

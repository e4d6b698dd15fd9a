"""Long renders: what an hour of speech costs its worker, and what it costs everyone else.

1. One render of ``--characters`` of speech to MP3 (the job runner's own ``render``, in a fresh
   process): wall time, seconds of audio per second of rendering, and the worker's peak memory.
2. A sandbox where ``--speakers`` organizations each send the 20-segment x 5,000-character
   script: another organization's median ``GET /v1/credits`` and image job, as ratios to the
   same requests on the idle server a moment before (about 1 means untouched).

Usage::

    python benchmarks/bench_long_render.py [--characters 10000] [--speakers 3]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

from mediagen_sandbox.testing import running_sandbox

SENTENCE = "The keeper climbs the winding stair and lights the lamp above the sleeping harbour. "
SCRIPT = {
    "model": "voxa-tts",
    "segments": [
        {"voice_name": "Aria", "text": (f"Part {i + 1}. " + SENTENCE * 60)[:5000]}
        for i in range(20)
    ],
}


def _render(characters: int, path: str) -> tuple[float, float, float]:
    """(seconds, seconds of audio, peak MiB) of one speech render, in this process."""
    from mediagen_sandbox.media import render
    from mediagen_sandbox.media.spec import OutputSpec

    text = (SENTENCE * (characters // len(SENTENCE) + 1))[:characters]
    spec = OutputSpec(media="audio", content_type="audio/mpeg", audio_kind="speech", text=text)
    started = time.perf_counter()
    out = render(spec, path)
    seconds = time.perf_counter() - started
    return (
        seconds,
        out.duration_seconds or 0.0,
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    )


def bench_render(characters: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            seconds, audio, peak = pool.submit(_render, characters, f"{tmp}/a.mp3").result()
    print(
        f"render {characters} characters: {seconds:.1f} s for {audio:.0f} s of speech "
        f"({audio / seconds:.0f}x real time), worker peak {peak:.0f} MiB"
    )


def _median_latency(c: httpx.Client, call, n: int) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        call(c)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _credits(c: httpx.Client) -> None:
    c.get("/v1/credits").raise_for_status()


def _image(c: httpx.Client) -> None:
    gen = c.post("/v1/images", json={"model": "pixel-1", "prompt": "a lighthouse"}).json()
    while gen["status"] == "pending":
        time.sleep(0.05)
        gen = c.get(f"/v1/generations/{gen['id']}").raise_for_status().json()


def bench_others(speakers: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, running_sandbox(data_dir=Path(tmp)) as sb:
        quiet = sb.new_tenant(balance=100_000)
        loud = [sb.new_tenant(balance=10_000_000) for _ in range(speakers)]
        with httpx.Client(base_url=sb.base_url, headers=quiet.headers, timeout=600) as c:
            _image(c)
            idle = _median_latency(c, _credits, 20), _median_latency(c, _image, 3)
            for tenant in loud:
                httpx.post(
                    f"{sb.base_url}/v1/audio", json=SCRIPT, headers=tenant.headers, timeout=60
                ).raise_for_status()
            time.sleep(2)
            busy = _median_latency(c, _credits, 20), _median_latency(c, _image, 3)
    print(
        f"{speakers} long speech jobs rendering: credits {idle[0] * 1000:.1f} -> "
        f"{busy[0] * 1000:.1f} ms (x{busy[0] / idle[0]:.2f}), image {idle[1]:.2f} -> "
        f"{busy[1]:.2f} s (x{busy[1] / idle[1]:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--characters", type=int, default=10_000)
    parser.add_argument("--speakers", type=int, default=3)
    args = parser.parse_args()
    bench_render(args.characters)
    bench_others(args.speakers)


if __name__ == "__main__":
    main()

"""Forecast backtest: does the p50 wall-time forecast match a batch that really runs?

The sandbox runs at a speed where an image job takes seconds (its latency is uniform over the
model kind's range times the speed) and fails at a known rate. A first batch makes the history;
the forecast for a second, equal batch is then compared with the second batch's real wall time
(first submit to last job settled) and real failures. Repeated over a few rounds, printed as
relative errors (goal: p50 within 20%).

    python benchmarks/bench_forecast.py
    python benchmarks/bench_forecast.py --jobs 20 --rounds 3 --speed 0.5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time


def _run_batch(client, body: dict, jobs: int) -> tuple[float, int]:
    started = time.monotonic()
    gens = [
        client.images.create(**{**body, "prompt": f"{body['prompt']} {i}"}) for i in range(jobs)
    ]
    done = list(client.generations.watch(gens, timeout=600, poll_interval=0.05, download=False))
    return time.monotonic() - started, sum(g.status == "failed" for g in done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--speed", type=float, default=0.3)
    parser.add_argument("--failure-rate", type=float, default=0.2)
    args = parser.parse_args()

    import mediagen
    from mediagen.history import forecast
    from mediagen_sandbox.testing import running_sandbox

    body = {"model": "pixel-1", "prompt": "a lighthouse at dusk"}
    errors, failure_errors = [], []
    with running_sandbox(speed=args.speed) as sandbox, tempfile.TemporaryDirectory() as cache:
        sandbox.admin.set_config(failure_rates={"pixel-1": args.failure_rate})
        tenant = sandbox.new_tenant(balance=1_000_000)
        with mediagen.Client(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=cache
        ) as client:
            _run_batch(client, body, args.jobs)  # the history the first forecast rests on
            for round_ in range(args.rounds):
                predicted = forecast(body, client, count=args.jobs)
                actual, failed = _run_batch(client, body, args.jobs)
                error = (predicted.p50_seconds - actual) / actual
                errors.append(abs(error))
                failure_errors.append(predicted.expected_failures - failed)
                print(
                    f"round {round_ + 1}: forecast p50 {predicted.p50_seconds:6.2f} s "
                    f"(p90 {predicted.p90_seconds:6.2f} s, from {predicted.based_on} past), "
                    f"actual {actual:6.2f} s, error {error:+.1%}; "
                    f"failures expected {predicted.expected_failures:.1f}, happened {failed}"
                )
    print(
        f"p50 wall-time forecast error, median of {args.rounds} rounds: "
        f"{statistics.median(errors):.1%} (goal <= 20%); failures off by "
        f"{statistics.median(failure_errors):+.1f} per batch of {args.jobs}"
    )


if __name__ == "__main__":
    main()

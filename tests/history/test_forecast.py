"""Forecasts from history: checked against known latency and failure distributions, and against
a batch that really runs on the sandbox."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import mediagen
from mediagen.history import forecast, forecast_batch
from mediagen.history._forecast import MIN_SAMPLES


def _history(model: str, latencies: list[float], failed: int = 0, mode=None) -> pd.DataFrame:
    now = pd.Timestamp("2026-11-01", tz="UTC")
    rows = [
        {"model": model, "mode": mode, "status": "completed", "latency_s": s, "created_at": now}
        for s in latencies
    ]
    rows += [
        {"model": model, "mode": mode, "status": "failed", "latency_s": 1.0, "created_at": now}
    ] * failed
    return pd.DataFrame(rows)


def test_constant_latency_forecasts_that_latency_and_counts_its_sources():
    history = _history("pixel-1", [10.0] * 20)
    result = forecast_batch({"model": "pixel-1", "prompt": "x"}, history, count=8)
    assert result.p50_seconds == pytest.approx(10.0)
    assert result.p90_seconds == pytest.approx(10.0)
    assert result.based_on == 20
    assert result.expected_failures == 0
    assert "from 20 past generations" in result.summary()


def test_the_batch_waits_for_its_slowest_job():
    """Uniform(0, 100) latencies: the max of n draws has median 100 * 0.5 ** (1 / n)."""
    rng = np.random.default_rng(1)
    history = _history("vidra-2", list(rng.uniform(0, 100, 5000)))
    result = forecast_batch([{"model": "vidra-2"}] * 10, history, simulations=20000)
    assert result.p50_seconds == pytest.approx(100 * 0.5 ** (1 / 10), rel=0.02)
    assert result.p90_seconds == pytest.approx(100 * 0.9 ** (1 / 10), rel=0.02)


def test_submit_rate_spreads_the_starts():
    history = _history("pixel-1", [5.0] * 10)
    result = forecast_batch({"model": "pixel-1"}, history, count=11, submit_rate=2.0)
    assert result.p50_seconds == pytest.approx(5.0 + 10 / 2.0)


def test_expected_failures_follow_each_models_failure_rate():
    history = pd.concat(
        [_history("pixel-1", [3.0] * 15, failed=5), _history("voxa-tts", [2.0] * 10)]
    )
    batch = [{"model": "pixel-1"}] * 8 + [{"model": "voxa-tts"}] * 4
    result = forecast_batch(batch, history)
    assert result.expected_failures == pytest.approx(8 * 5 / 20)


def test_too_little_history_falls_back_plainly():
    history = _history("pixel-1", [3.0] * (MIN_SAMPLES - 1))
    result = forecast_batch({"model": "pixel-1"}, history, count=3)
    assert result.p50_seconds is None
    assert f"has {MIN_SAMPLES - 1} past generations, needs {MIN_SAMPLES}" in result.summary()
    mixed = pd.concat([history, _history("voxa-tts", [2.0] * 10)])
    both = forecast_batch([{"model": "pixel-1"}, {"model": "voxa-tts"}], mixed)
    assert both.p50_seconds == pytest.approx(2.0)
    assert "not counted: pixel-1 has" in both.summary()


def test_modes_are_told_apart_where_the_history_knows_them():
    history = pd.concat(
        [
            _history("vidra-2", [60.0] * 10, mode="text_to_video"),
            _history("vidra-2", [5.0] * 10, mode="extend"),
        ]
    )
    slow = forecast_batch({"model": "vidra-2", "mode": "text_to_video"}, history)
    fast = forecast_batch({"model": "vidra-2", "mode": "extend"}, history)
    assert slow.p50_seconds == pytest.approx(60.0)
    assert fast.p50_seconds == pytest.approx(5.0)


@pytest.mark.slow
def test_a_forecast_rests_on_the_jobs_that_really_ran(sandbox, tenant, tmp_path):
    """History made by real jobs: the forecast counts them, takes their failure rate, and its
    wall time for four more is the slowest of four of their real latencies (how close that is
    to a real batch is measured in benchmarks/bench_forecast.py)."""
    body = {"model": "pixel-1", "prompt": "a lighthouse [[slow:1]]"}
    with mediagen.Client(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path
    ) as client:
        first = [client.images.create(**body) for _ in range(6)]
        list(client.generations.watch(first, timeout=60, poll_interval=0.05, download=False))
        failing = {"model": "pixel-1", "prompt": "refused [[fail:safety]]"}
        for gen in [client.images.create(**failing) for _ in range(2)]:
            client.generations.wait(gen, timeout=60, poll_interval=0.05, download=False)
        predicted = forecast(body, client, count=4)
        history = client.generations.to_dataframe(sync=False)
    latencies = history.loc[history["status"] == "completed", "latency_s"]
    assert predicted.based_on == 8
    assert predicted.expected_failures == pytest.approx(4 * 2 / 8)
    assert latencies.median() <= predicted.p50_seconds <= latencies.max()
    assert predicted.p90_seconds <= latencies.max()


def test_a_batch_estimate_shows_the_forecast_once_history_is_stored(
    sandbox, tenant, tmp_path, capsys
):
    body = {"model": "pixel-1", "prompt": "dusk"}
    with mediagen.Client(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path
    ) as client:
        client.submit_batch([body] * 2)
        first = capsys.readouterr().out
        assert "Forecast: no local history yet" in first
        for gen in [client.images.create(**body) for _ in range(5)]:
            client.generations.wait(gen, timeout=60, poll_interval=0.05, download=False)
        client.generations.to_dataframe()  # builds the store
        client.submit_batch([body] * 3)
        later = capsys.readouterr().out
    assert "3 jobs: all done in about" in later
    assert "from 7 past generations of yours" in later  # 2 + 5, synced before forecasting


def test_the_forecast_function_is_never_shadowed_by_its_module():
    """A package attribute named like a submodule turns into the module once the submodule is
    imported; the forecast lives in a private module so ``forecast`` stays the function."""
    import subprocess
    import sys

    code = (
        "import mediagen.history._forecast\n"
        "from mediagen.history import forecast, forecast_batch\n"
        "import mediagen.history as h\n"
        "assert callable(forecast) and callable(forecast_batch) and callable(h.forecast)\n"
        "assert not isinstance(forecast, type(h))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)

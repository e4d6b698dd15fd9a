"""Parquet and CSV round trips keep every value and dtype."""

from __future__ import annotations

import pandas as pd
import pytest
from history_factory import generation, journal_record

from mediagen import history as h


@pytest.fixture
def frame():
    tricky = [
        "None",  # not a missing value
        "",  # an empty prompt is not NA either
        'commas, "quotes"\nand a newline',
        "NA",
        "ünïcødé ✓",
    ]
    gens = [generation(prompt=p, model=f"m{i % 2}") for i, p in enumerate(tricky)]
    gens.append(generation(type="image", status="failed", error=("safety", "refused")))
    gens.append(generation(type="audio", status="pending", idempotency_key="key-1"))
    gens.append(generation(credits=0.1 + 0.2, latency=0.123456))
    journal = [
        journal_record(
            gens[0],
            estimate=43.2,
            discount=10.0,
            tier="1080p",
            duration_seconds=7.5,
            reference_counts={"reference_images": 3, "first_frame": 1},
        ),
        journal_record(gens[6], estimate=4.0, generate_image_count=2),
    ]
    return h.frame_from_generations(gens, journal=journal)


def test_parquet_round_trip(frame, tmp_path):
    path = tmp_path / "history.parquet"
    h.to_parquet(frame, path)
    pd.testing.assert_frame_equal(h.read_history_parquet(path), frame)


def test_csv_round_trip(frame, tmp_path):
    path = tmp_path / "history.csv"
    h.to_csv(frame, path)
    back = h.read_history_csv(path)
    pd.testing.assert_frame_equal(back, frame)
    assert back["prompt"].tolist()[:2] == ["None", ""]


def test_csv_is_plain_for_other_tools(frame, tmp_path):
    path = tmp_path / "history.csv"
    h.to_csv(frame, path)
    plain = pd.read_csv(path)
    assert plain["created_at"].iloc[0].endswith("+0000")  # an explicit UTC offset
    assert plain["credits_charged"].dtype == "float64"


def test_empty_round_trips(tmp_path):
    empty = h.frame_from_generations([])
    h.to_parquet(empty, tmp_path / "e.parquet")
    h.to_csv(empty, tmp_path / "e.csv")
    pd.testing.assert_frame_equal(h.read_history_parquet(tmp_path / "e.parquet"), empty)
    pd.testing.assert_frame_equal(h.read_history_csv(tmp_path / "e.csv"), empty)

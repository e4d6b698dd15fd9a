"""Spend arithmetic on a hand-built history: every figure computed by hand, exact to the cent."""

from __future__ import annotations

import datetime as dt
import math

import pandas as pd
import pytest
from history_factory import T0, generation, journal_record

from mediagen import history as h


@pytest.fixture
def frame():
    day1 = T0  # Monday 2026-03-30 22:00 UTC
    day2 = T0 + dt.timedelta(days=1, hours=3)  # Wednesday 2026-04-01 01:00 (next month)
    gens = [
        # vidra-2: two charges whose float sum is not exact (0.1 + 0.2 style)
        generation(model="vidra-2", type="video", credits=0.1, created=day1),
        generation(model="vidra-2", type="video", credits=0.2, created=day2, latency=30),
        generation(
            model="vidra-2",
            type="video",
            status="failed",
            error=("timeout", "took too long"),
            created=day2,
        ),
        # pixa: 2 images for 7.2, one failure refunded 3.6, one pending reserving 3.6
        generation(
            model="pixa",
            type="image",
            credits=7.2,
            created=day1,
            outputs=[{"width": 1024, "height": 1024}, {"width": 1024, "height": 1024}],
        ),
        generation(
            model="pixa", type="image", status="failed", error=("safety", "no"), created=day2
        ),
        generation(model="pixa", type="image", status="pending", created=day2),
        # tunesmith: 30 s of audio for 12.5
        generation(model="tunesmith", type="audio", credits=12.5, created=day2),
    ]
    gens[6]["outputs"][0]["duration_seconds"] = 30.0
    journal = [
        journal_record(gens[0], estimate=0.1),
        journal_record(gens[1], estimate=0.2),
        journal_record(gens[3], estimate=8.0, discount=10.0),  # 7.2 after discount
        journal_record(gens[4], estimate=4.0, discount=10.0),  # reservation 3.6 refunded
        journal_record(gens[5], estimate=4.0, discount=10.0),  # 3.6 reserved
        journal_record(gens[6], estimate=12.0),  # quoted 12.0, charged 12.5
        # gens[2] (vidra-2 failure) was made elsewhere: its refund is unknown
    ]
    return h.frame_from_generations(gens, journal=journal)


def test_spend_by_model(frame):
    table = h.spend_by_model(frame)
    assert table["credits"].to_dict() == {"tunesmith": 12.5, "pixa": 7.2, "vidra-2": 0.3}
    assert table.loc["pixa", ["generations", "completed", "failed", "pending"]].tolist() == [
        3,
        1,
        1,
        1,
    ]


def test_spend_by_type_and_status(frame):
    assert h.spend_by_type(frame)["credits"].to_dict() == {
        "audio": 12.5,
        "image": 7.2,
        "video": 0.3,
    }
    by_status = h.spend_by_status(frame)
    assert by_status["credits"].to_dict() == {"completed": 20.0, "failed": 0.0, "pending": 0.0}
    assert by_status["generations"].to_dict() == {"completed": 4, "failed": 2, "pending": 1}


def test_spend_by_day_week_and_month(frame):
    daily = h.spend_by_period(frame, "D", tz="UTC")
    assert daily.index.tolist() == [
        pd.Timestamp("2026-03-30"),
        pd.Timestamp("2026-03-31"),
        pd.Timestamp("2026-04-01"),
    ]
    assert daily["credits"].tolist() == [7.3, 0.0, 12.7]
    assert daily["completed"].tolist() == [2, 0, 2]

    weekly = h.spend_by_period(frame, "W", by="model", tz="UTC")
    assert weekly.index.tolist() == [pd.Timestamp("2026-03-30")]
    assert weekly.iloc[0].to_dict() == {"pixa": 7.2, "tunesmith": 12.5, "vidra-2": 0.3}

    monthly = h.spend_by_period(frame, "M", tz="UTC")
    assert monthly["credits"].tolist() == [7.3, 12.7]
    with pytest.raises(ValueError, match="freq"):
        h.spend_by_period(frame, "fortnight")


def test_days_are_the_users_local_days_labelled_as_dates(frame):
    # 2026-03-30 22:00 UTC is already March 31 in Tokyo (+9) and still March 30 in New York
    tokyo = h.spend_by_period(frame, "D", tz="Asia/Tokyo")
    assert tokyo.index[0] == pd.Timestamp("2026-03-31")
    new_york = h.spend_by_period(frame, "D", tz="America/New_York")
    assert new_york.index[0] == pd.Timestamp("2026-03-30")
    assert tokyo["credits"].sum() == new_york["credits"].sum() == 20.0
    assert tokyo.index.tz is None
    assert "00:00:00" not in repr(tokyo), "labels are dates, not UTC midnights"
    assert str(tokyo.index[0].date()) == "2026-03-31"


def test_failures_and_refunds_by_model(frame):
    table = h.failures_by_model(frame)
    pixa, vidra = table.loc["pixa"], table.loc["vidra-2"]
    assert pixa["failure_rate"] == 0.5  # pending does not count
    assert pixa["refunded_credits"] == 3.6
    assert pixa["refund_unknown"] == 0
    assert vidra["failure_rate"] == pytest.approx(1 / 3)
    assert math.isnan(vidra["refunded_credits"])  # unknown, not zero
    assert vidra["refund_unknown"] == 1
    assert table.loc["tunesmith", "failure_rate"] == 0.0
    codes = h.failures_by_code(frame)
    assert set(map(tuple, codes[["error_code", "model", "failed"]].values.tolist())) == {
        ("timeout", "vidra-2", 1),
        ("safety", "pixa", 1),
    }


def test_cost_per_output(frame):
    table = h.cost_per_output(frame)
    assert table.loc["tunesmith", "credits_per_second"] == 12.5 / 30
    assert table.loc["pixa", "credits_per_image"] == 3.6
    assert table.loc["vidra-2", "credits_per_second"] == 0.3 / 10
    assert math.isnan(table.loc["pixa", "credits_per_second"])
    assert math.isnan(table.loc["tunesmith", "credits_per_image"])


def test_cumulative_spend_against_the_member_cap(frame):
    credits = {
        "balance": 70.0,
        "member_limit": {
            "limit": 100.0,
            "used": 16.3,
            "remaining": 83.7,
            "resets_at": "2026-05-01T00:00:00Z",
        },
    }
    table = h.cumulative_spend(frame, credits)
    # the cycle is April (UTC): the March charges are not in it
    assert table.attrs["cycle_start"] == pd.Timestamp("2026-04-01", tz="UTC")
    # in charge order: tunesmith finished 2.5 s after submit, the vidra-2 job after 30 s
    assert table["credits"].tolist() == [12.5, 0.2]
    assert table["cumulative"].tolist() == [12.5, 12.7]
    assert table.attrs["reserved_pending"] == 3.6
    assert table["remaining"].tolist() == [83.9, 83.7]
    assert table["remaining"].iloc[-1] == credits["member_limit"]["remaining"]
    assert table["cumulative"].iloc[-1] + table.attrs["reserved_pending"] == 16.3


def test_cumulative_spend_without_a_cap(frame):
    table = h.cumulative_spend(frame, {"balance": 5.0})
    assert "limit" not in table.columns


def test_estimate_versus_charge(frame):
    table = h.estimate_vs_charge(frame).set_index("model")
    assert len(table) == 4
    assert table.loc["tunesmith", "difference"] == 0.5
    assert not table.loc["tunesmith", "matches"]
    assert table.loc["pixa", "estimate_credits"] == 8.0
    assert table.loc["pixa", "difference"] == 0.0
    assert table["matches"].sum() == 3


def test_headline(frame):
    numbers = h.headline(frame, {"balance": 70.0})
    assert numbers["spent"] == 20.0
    assert (numbers["completed"], numbers["failed"], numbers["pending"]) == (4, 2, 1)
    assert numbers["failure_rate"] == 2 / 6
    assert numbers["refunded"] == 3.6
    assert numbers["reserved_pending"] == 3.6
    assert numbers["balance"] == 70.0


def test_empty_frame_gives_empty_tables():
    empty = h.frame_from_generations([])
    assert h.spend_by_model(empty).empty
    assert h.spend_by_period(empty).empty
    assert h.failures_by_model(empty).empty
    assert h.cost_per_output(empty).empty
    assert h.cumulative_spend(empty).empty
    assert h.headline(empty)["spent"] == 0.0

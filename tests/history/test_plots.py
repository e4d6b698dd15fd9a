"""Plots return their Axes and draw exactly the spend figures."""

from __future__ import annotations

import datetime as dt

import pytest
from history_factory import T0, generation

from mediagen import history as h


@pytest.fixture
def frame():
    return h.frame_from_generations(
        [
            generation(model="vidra-2", credits=40.0, created=T0),
            generation(model="pixa", type="image", credits=7.2, created=T0),
            generation(model="vidra-2", credits=80.0, created=T0 + dt.timedelta(days=1)),
            generation(model="pixa", type="image", status="failed", error=("safety", "x")),
            generation(model="pixa", type="image", status="pending"),
        ]
    )


def _bar_heights(ax):
    return [round(p.get_height(), 2) for p in ax.patches]


def test_spend_over_time_stacks_by_model(frame):
    ax = h.plot_spend_over_time(frame)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["2026-03-30", "2026-03-31"]
    # pixa then vidra-2, one bar per day each
    assert _bar_heights(ax) == [7.2, 0.0, 40.0, 80.0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["pixa", "vidra-2"]


def test_spend_per_model(frame):
    ax = h.plot_spend_by_model(frame)
    widths = {
        t.get_text(): p.get_width() for t, p in zip(ax.get_yticklabels(), ax.patches, strict=True)
    }
    assert widths == {"pixa": 7.2, "vidra-2": 120.0}


def test_latency_distribution(frame):
    ax = h.plot_latency(frame, bins=5)
    counted = sum(p.get_height() for p in ax.patches)
    assert counted == frame["latency_s"].notna().sum() == 4


def test_plots_draw_on_a_given_axes_and_survive_no_data(frame):
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    assert h.plot_spend_by_model(frame, ax=ax) is ax
    empty = h.frame_from_generations([])
    for plot in (h.plot_spend_over_time, h.plot_spend_by_model, h.plot_latency):
        drawn = plot(empty)
        assert drawn.texts[0].get_text() == "no data"

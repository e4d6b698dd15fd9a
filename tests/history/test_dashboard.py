"""The spend dashboard, kernel side: filters, headline, plots, paging, refresh hook."""

from __future__ import annotations

import datetime as dt

import pytest
from history_factory import T0, FakeListEndpoint, generation

from mediagen import history as h
from mediagen.widgets.spend_dashboard import SpendDashboard, format_credits


class FakeClient(FakeListEndpoint):
    """A page source with ``credits.get()``, standing in for mediagen.Client offline."""

    def __init__(self, generations):
        super().__init__(generations)
        self.credits = self
        self.journal = None

    def get(self):
        return {
            "balance": 380.0,
            "member_limit": {"limit": 500.0, "used": 120.0, "remaining": 380.0},
        }


@pytest.fixture
def gens():
    out = [
        generation(model="vidra-2", credits=40.0, created=T0 + dt.timedelta(minutes=i))
        for i in range(30)
    ]
    out.append(generation(model="pixa", type="image", status="failed", error=("safety", "x")))
    out.append(generation(model="pixa", type="image", status="pending"))
    return out


def test_headline_plots_and_table(gens):
    board = SpendDashboard(FakeClient(gens), page_size=10)
    assert len(board.frame) == 32
    text = board.headline.value
    assert "1,200 credits" in text
    assert "32 (30 completed, 1 failed, 1 pending)" in text
    assert "3.2%" in text  # 1 failed of 31 finished
    assert "120 of 500 used, 380 left" in text
    assert bytes(board.spend_plot.value).startswith(b"\x89PNG")
    assert not board.model_plot.value  # drawn when its tab is shown
    board.plots.selected_index = 1
    assert bytes(board.model_plot.value).startswith(b"\x89PNG")
    board.draw_plots()
    assert bytes(board.latency_plot.value).startswith(b"\x89PNG")
    assert board.page_label.value == "page 1 of 4 (32 rows)"
    assert board.prev_button.disabled
    assert board.table.value.count("<tr") == 11  # header + 10 rows


def test_filters_and_paging(gens):
    board = SpendDashboard(FakeClient(gens), page_size=10)
    assert list(board.model_filter.options) == ["(all)", "pixa", "vidra-2"]
    board.model_filter.value = "pixa"
    assert len(board.filtered) == 2
    assert "0 credits" in board.headline.value
    assert board.page_label.value == "page 1 of 1 (2 rows)"
    board.model_filter.value = "(all)"
    board.next_button.click()
    board.next_button.click()
    board.next_button.click()
    assert board.page == 3
    assert board.next_button.disabled
    board.show_page(99)
    assert board.page == 3


def test_generation_finished_refreshes_incrementally(gens):
    client = FakeClient(gens)
    # the burst below takes microseconds; a second of quiet cannot be missed on a slow machine
    board = SpendDashboard(client, refresh_delay=1.0)
    pending = gens[-1]
    pending.update(status="completed", completed_at=pending["created_at"], credits_charged=7.2)
    client.queries.clear()
    for _ in range(5):  # a burst of finishes: one refresh
        board.generation_finished(pending)
    board.wait_for_refresh(timeout=5)
    assert len(client.queries) == 1
    assert client.queries[0]["created_after"] is not None
    assert board.frame["credits_charged"].sum() == 1207.2, board.status_line.value
    assert "1,207.2 credits" in board.headline.value


def test_offline_frame_without_client(gens):
    board = SpendDashboard(frame=h.frame_from_generations(gens))
    board.refresh()
    assert "1,200 credits" in board.headline.value


def test_format_credits_never_rounds_further():
    assert format_credits(43.2) == "43.2"
    assert format_credits(1200.0) == "1,200"
    assert format_credits(0.05) == "0.05"
    assert format_credits(float("nan")) == "–"

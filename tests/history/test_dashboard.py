"""The spend dashboard, kernel side: filters, headline, plots, paging, refresh hook."""

from __future__ import annotations

import datetime as dt

import pytest
import traitlets
from history_factory import T0, FakeListEndpoint, generation

from mediagen import history as h
from mediagen.widgets.spend_dashboard import SpendDashboard, format_credits, png_bytes


class FakeClient(FakeListEndpoint):
    """A page source with ``credits.get()``, standing in for mediagen.Client offline."""

    def __init__(self, generations):
        super().__init__(generations)
        self.credits = self
        self.journal = None
        self.unreachable = False

    def __call__(self, query):
        if self.unreachable:
            raise ConnectionError("the service is unreachable")
        return super().__call__(query)

    def get(self):
        return {
            "balance": 380.0,
            "member_limit": {"limit": 500.0, "used": 120.0, "remaining": 380.0},
        }


def headline_text(board: SpendDashboard) -> str:
    """The headline as the view shows it, one "label: value" per figure."""
    return "\n".join(f"{item['label']}: {item['value']}" for item in board.headline)


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
    text = headline_text(board)
    assert "1,200 credits" in text
    assert "32 (30 completed, 1 failed, 1 pending)" in text
    assert "3.2%" in text  # 1 failed of 31 finished
    assert "120 of 500 used, 380 left" in text
    assert png_bytes(board.spend_plot).startswith(b"\x89PNG")
    assert not board.model_plot  # drawn when its tab is shown
    board.plot_tab = 1
    assert png_bytes(board.model_plot).startswith(b"\x89PNG")
    board.draw_plots()
    assert png_bytes(board.latency_plot).startswith(b"\x89PNG")
    assert board.page_label == "page 1 of 4 (32 rows)"
    assert board.page == 0
    assert board.page_count == 4
    assert len(board.table["rows"]) == 10
    assert board.table["columns"][:4] == ["created_at", "type", "model", "status"]


def test_filters_and_paging(gens):
    board = SpendDashboard(FakeClient(gens), page_size=10)
    assert board.choices["model"] == ["pixa", "vidra-2"]
    assert board.choices["status"] == ["completed", "failed", "pending"]
    board.model = "pixa"
    assert len(board.filtered) == 2
    assert "Spent: 0 credits" in headline_text(board)
    assert board.page_label == "page 1 of 1 (2 rows)"
    board.model = ""
    for _ in range(5):  # what the view's Next button sends, past the last page too
        board.page += 1
    assert board.page == 3
    assert board.page_label == "page 4 of 4 (32 rows)"
    assert len(board.table["rows"]) == 2
    board.show_page(99)
    assert board.page == 3
    board.type = "image"  # a new filter starts at the first page
    assert board.page == 0
    assert board.page_label == "page 1 of 1 (2 rows)"


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
    assert board.frame["credits_charged"].sum() == 1207.2, board.status_line
    assert "1,207.2 credits" in headline_text(board)
    assert board.status_line.startswith("Updated ")


def test_offline_frame_without_client(gens):
    board = SpendDashboard(frame=h.frame_from_generations(gens))
    board.refresh()
    assert "1,200 credits" in headline_text(board)


def test_format_credits_never_rounds_further():
    assert format_credits(43.2) == "43.2"
    assert format_credits(1200.0) == "1,200"
    assert format_credits(0.05) == "0.05"
    assert format_credits(float("nan")) == "–"


def test_a_refresh_that_fails_says_so_and_keeps_what_was_shown(gens):
    client = FakeClient(gens)
    board = SpendDashboard(client)
    shown = board.headline
    client.unreachable = True
    board.refresh(full=True)
    assert board.status_line == ("Refresh failed: ConnectionError: the service is unreachable"), (
        board.status_line
    )
    assert board.headline == shown
    assert board.refreshing is False


def test_the_refresh_button_comes_back_with_the_figures_not_before_them(gens):
    """The view enables Refresh when ``refreshing`` goes false. Sent before the figures and
    the filters' new choices, it let a click come while those still laid the page out and
    moved the button from under the pointer (a lost click in marimo on a loaded machine)."""
    client = FakeClient(gens[:3])
    board = SpendDashboard(client)
    client.generations.extend(gens[3:])  # a job finished since: a new model among the choices
    changed: list[str] = []
    board.observe(lambda change: changed.append(change["name"]), names=traitlets.All)
    board.refresh(full=True)
    assert "choices" in changed, changed
    assert "headline" in changed, changed
    last_of = {name: place for place, name in enumerate(changed)}
    assert changed[-1] == "refreshing", changed  # its return to false comes last
    assert last_of["status_line"] < last_of["refreshing"]
    assert board.refreshing is False


def test_a_refresh_message_from_the_view_refreshes(gens):
    client = FakeClient(gens)
    board = SpendDashboard(client)
    client.queries.clear()
    board._handle_custom_msg({"action": "refresh"}, [])
    assert len(client.queries) == 1


def test_a_bad_date_is_refused_with_the_format_named(gens):
    board = SpendDashboard(FakeClient(gens))
    with pytest.raises(Exception, match="YYYY-MM-DD"):
        board.since = "last tuesday"
    board.since = dt.date(2026, 1, 2)
    assert board.since == "2026-01-02"
    board.since = None
    assert board.since == ""

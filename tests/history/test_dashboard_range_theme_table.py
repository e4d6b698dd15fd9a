"""The spend dashboard's date range (local dates), dark-theme plots, legend placement, the
sortable and searchable table, and its static fallback."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from history_factory import T0, generation
from PIL import Image
from test_dashboard import FakeClient, headline_text

import mediagen
from mediagen import history as h
from mediagen.history.spend import local_timezone
from mediagen.widgets.spend_dashboard import SpendDashboard, png_bytes


@pytest.fixture
def days():
    """One vidra-2 charge a day for 10 days, plus two pixa images on the last day."""
    out = [
        generation(model="vidra-2", credits=10.0 + i, created=T0 + dt.timedelta(days=i))
        for i in range(10)
    ]
    last = T0 + dt.timedelta(days=9)
    out.append(generation(model="pixa", type="image", credits=3.0, created=last, prompt="kite"))
    out.append(generation(model="pixa", type="image", credits=1.0, created=last, prompt="boat"))
    return out


def local_day(moment: dt.datetime) -> dt.date:
    return moment.astimezone(local_timezone()).date()


def corner(png: bytes) -> tuple[int, ...]:
    with Image.open(io.BytesIO(png)) as image:
        return image.convert("RGB").getpixel((2, 2))


def test_a_date_range_keeps_the_local_days_between_its_ends(days):
    board = SpendDashboard(FakeClient(days), page_size=50)
    first = local_day(T0 + dt.timedelta(days=2))
    last = local_day(T0 + dt.timedelta(days=4))
    board.since = first
    board.until = last
    kept = board.filtered
    assert len(kept) == 3
    assert {local_day(t) for t in kept["created_at"]} == {
        first,
        first + dt.timedelta(days=1),
        last,
    }
    assert "39 credits" in headline_text(board)  # 12 + 13 + 14
    assert board.page_label == "page 1 of 1 (3 rows)"
    board.since = None
    assert len(board.filtered) == 5  # days 0 to 4


def test_the_table_sorts_and_searches(days):
    board = SpendDashboard(FakeClient(days), page_size=5)
    board.search = "pixa"
    assert list(board.table_rows["credits_charged"]) in ([3.0, 1.0], [1.0, 3.0])
    board.sort_by = "credits_charged"
    board.descending = False
    assert list(board.table_rows["credits_charged"]) == [1.0, 3.0]
    column = board.table["columns"].index("credits_charged")
    assert [row[column] for row in board.table["rows"]] == ["1.0", "3.0"]
    assert board.page_label == "page 1 of 1 (2 rows)"
    board.search = "boat"
    assert list(board.table_rows["prompt"]) == ["boat"]
    board.search = ""
    board.descending = True
    assert board.table_rows["credits_charged"].iloc[0] == 19.0
    assert board.page_count == 3


def test_plots_follow_a_dark_page(days):
    board = SpendDashboard(FakeClient(days))
    light = corner(png_bytes(board.spend_plot))
    assert min(light) > 200, "a light page gets a light plot"
    board.dark = True  # what the view reports on a dark JupyterLab theme
    dark = corner(png_bytes(board.spend_plot))
    assert max(dark) < 60, "a dark page gets a dark plot, not a white box"
    board.plot_tab = 1
    assert max(corner(png_bytes(board.model_plot))) < 60


def test_the_legend_sits_beside_the_bars_not_over_them(days):
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6, 3), layout="constrained")
    ax = h.plot_spend_over_time(h.frame_from_generations(days), ax=figure.subplots())
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    assert legend.x0 >= axes.x1


def test_day_labels_are_local_dates(days):
    table = h.spend_by_period(h.frame_from_generations(days), "D")
    assert table.index.tz is None
    assert table.index[0].date() == local_day(T0)


def test_the_dashboard_is_public_and_leaves_a_static_picture(days):
    assert "spend_dashboard" in mediagen.__all__
    board = SpendDashboard(FakeClient(days))
    data, _ = board._repr_mimebundle_()
    assert data["text/plain"] == "Spend dashboard: 12 generations, 149 credits spent"
    assert "data:image/png;base64," in data["text/html"]
    assert "149 credits" in data["text/html"]

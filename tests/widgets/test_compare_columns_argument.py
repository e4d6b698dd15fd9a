"""The grid's columns go in as ``models=`` (what people write first), as ``settings=`` or
second: one argument under two names, in ``mediagen.compare`` and ``Compare`` alike; a column
added later shows its cells with it at once."""

from __future__ import annotations

import pytest

import mediagen
from mediagen.widgets import Compare, compare as widgets_compare

PROMPTS = ["a kite", "a lantern"]
COLUMNS = ["pixel-1", {"model": "pixel-pro", "quality": "high"}]


def test_models_builds_the_same_priced_grid_as_settings(make_client, tenant):
    client = make_client(tenant)
    by_models = mediagen.compare(PROMPTS, models=COLUMNS, client=client).join(60)
    by_settings = mediagen.compare(PROMPTS, settings=COLUMNS, client=client).join(60)
    second = mediagen.compare(PROMPTS, COLUMNS, client).join(60)
    assert by_models.plan.requests == by_settings.plan.requests == second.plan.requests
    assert [c["model"] for c in by_models.columns] == ["pixel-1", "pixel-pro"]
    assert by_models.plan.requests[(1, 1)]["quality"] == "high"
    assert by_models.total == pytest.approx(by_settings.total)
    assert by_models.total, "priced: every cell has the service's estimate"
    widget = Compare(PROMPTS, models=COLUMNS, client=client).join(60)
    assert widget.plan.requests == by_models.plan.requests
    assert widgets_compare(PROMPTS, models=COLUMNS, client=client).join(60).total == widget.total


@pytest.mark.parametrize("make", [mediagen.compare, widgets_compare, Compare])
def test_both_names_at_once_is_a_clear_type_error(make_client, tenant, make):
    with pytest.raises(TypeError, match=r"models=.* or settings=.*not both"):
        make(PROMPTS, settings=COLUMNS, models=COLUMNS, client=make_client(tenant))


@pytest.mark.parametrize("make", [mediagen.compare, widgets_compare, Compare])
def test_no_columns_is_a_clear_type_error(make_client, tenant, make):
    with pytest.raises(TypeError, match="needs its columns: models="):
        make(PROMPTS, client=make_client(tenant))


def test_a_column_added_has_its_cells_at_once_and_exports_before_its_prices_arrive(
    make_client, tenant, tmp_path
):
    grid = mediagen.compare(PROMPTS, models=["pixel-1"], client=make_client(tenant)).join(60)
    grid.add_column("lumen-4k")
    assert len(grid.cells) == len(PROMPTS) * len(grid.columns) == 4
    assert [(c["row"], c["col"]) for c in grid.cells] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    report = grid.export_html(tmp_path / "report.html").read_text(encoding="utf-8")
    assert report.count("lumen-4k") >= 1
    grid.join(60)
    assert all(cell["estimate"] for cell in grid.cells), "then every cell is priced"

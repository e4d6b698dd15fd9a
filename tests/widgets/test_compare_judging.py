"""``mediagen.compare``: ratings beside the winners, the grid's own buttons (add a column, run a
row or a column again, export the report) and what the report says of media too large to embed,
against the real sandbox (view messages stand in for clicks)."""

from __future__ import annotations

from widget_loop import run

import mediagen
from mediagen.widgets import Compare
from mediagen.widgets._loop_client import aclose

PROMPTS = ["a lighthouse at dusk", "a red fox in snow"]


def click(grid: Compare, **content) -> None:
    grid._on_view_message(grid, content, [])


def ledger_kinds(sandbox, tenant) -> list[str]:
    return [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]


def test_cells_are_rated_one_to_five_beside_the_winner_and_the_ratings_are_saved(
    make_client, tenant, tmp_path
):
    client = make_client(tenant)
    path = tmp_path / "rated.parquet"

    async def scenario():
        grid = Compare(PROMPTS, ["pixel-1", "pixel-pro"], client=client, run=True)
        await grid.wait()
        click(grid, action="choose", row=0, col=1)
        click(grid, action="rate", row=0, col=0, stars=2)
        click(grid, action="rate", row=0, col=1, stars=5)
        click(grid, action="rate", row=1, col=1, stars=3)
        click(grid, action="rate", row=1, col=1, stars=3)  # the same rating again clears it
        click(grid, action="rate", row=1, col=0, stars=4)
        click(grid, action="rate", row=1, col=0, stars=9)  # refused, said in the banner
        refused = grid.error
        grid.save(path)
        again = Compare.load(path, client=client)
        await again.wait()
        await aclose(client)
        return grid, again, refused

    grid, again, refused = run(scenario())
    assert "1 to 5" in refused
    assert grid.ratings == {"0,0": 2, "0,1": 5, "1,0": 4}
    choices = grid.choices
    assert list(zip(choices["row"], choices["model"], strict=True)) == [
        (0, "pixel-1"),
        (0, "pixel-pro"),
        (1, "pixel-1"),
    ]
    assert list(choices["rating"]) == [2, 5, 4]
    assert list(choices["chosen"]) == [False, True, False]
    assert choices["credits"].notna().all()
    assert again.ratings == grid.ratings
    assert again.choices.equals(choices)


def test_the_grids_buttons_add_a_column_rerun_a_row_and_export_the_report(
    make_client, tenant, sandbox, tmp_path, monkeypatch
):
    client = make_client(tenant)
    monkeypatch.chdir(tmp_path)  # a kernel writes where its notebook is

    async def scenario():
        grid = Compare(PROMPTS, ["pixel-1"], client=client, run=True)
        await grid.wait()
        first = [c["generation_id"] for c in grid.cells]
        click(grid, action="add_column", setting="lumen-4k")
        await grid.ready
        added_total = grid.total
        click(grid, action="run")
        await grid.wait()
        paid_for_column = ledger_kinds(sandbox, tenant).count("reserve")
        second = {(c["row"], c["col"]): c["generation_id"] for c in grid.cells}
        click(grid, action="add_column", setting='{"model": "pixel-pro", "quality": "high"}')
        await grid.ready
        click(grid, action="add_column", setting="no-such-model")  # refused, in the banner
        refused = grid.error
        click(grid, action="rerun", row=1)
        await grid.wait()
        click(grid, action="export", path="shared report.html")
        await aclose(client)
        return grid, first, second, added_total, paid_for_column, refused

    grid, first, second, added_total, paid_for_column, refused = run(scenario())
    assert [c["label"] for c in grid.columns][:2] == ["pixel-1", "lumen-4k"]
    assert grid.columns[2]["model"] == "pixel-pro"
    assert added_total == 2 * 1 + 2 * 2, "two pixel-1 cells and two lumen-4k cells at 1K"
    assert paid_for_column == 4, "the new column's two cells only"
    assert "unknown model 'no-such-model'" in refused
    by_cell = {(c["row"], c["col"]): c for c in grid.cells}
    assert by_cell[(0, 0)]["generation_id"] == first[0] == second[(0, 0)], "row 0 kept"
    assert by_cell[(0, 1)]["generation_id"] == second[(0, 1)]
    assert by_cell[(1, 0)]["generation_id"] not in (first[1], second[(1, 0)]), "row 1 ran again"
    assert by_cell[(1, 1)]["generation_id"] != second[(1, 1)]
    assert {c["status"] for c in grid.cells} == {"completed"}, "the new column's cells too"
    report = (tmp_path / "shared report.html").read_text()
    assert report.startswith("<!doctype html>")
    assert grid.exported == "Exported shared report.html"


def test_the_report_names_media_too_large_to_embed_without_their_place_on_this_machine(
    make_client, tenant, tmp_path
):
    cache = tmp_path / "private-cache"
    client = make_client(tenant, cache_dir=cache)
    grid = mediagen.compare(["a kite"], ["pixel-1", "voxa-tts"], client, run=True).join(60)
    report = grid.export_html(tmp_path / "report.html", max_embed_bytes=1_000).read_text()
    assert '<img src="data:image/' in report, "images are downsized, always embedded"
    assert "<audio" not in report, "the speech is over the limit"
    assert "voxa-tts #1 (audio):" in report
    assert "too large to include here" in report
    assert str(cache) not in report
    assert "private-cache" not in report
    cached = [p.name for p in cache.rglob("*") if p.is_file()]
    assert cached
    assert not any(name in report for name in cached), "no cached file is named"

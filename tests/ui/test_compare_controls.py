"""The comparison grid's own controls in real JupyterLab 4 and Chromium, against the sandbox:
stars rate a cell beside its row's winner, Add column prices a new setting that the next Run
pays for alone, Re-run runs one row or one column again, Export HTML writes the report beside
the notebook; and the grid follows the dark theme (the README's ``docs/compare-dark.png``,
refreshed with ``MEDIAGEN_UPDATE_SCREENSHOT=1``). Any Python error, error banner or console
error fails it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import expect
from test_compare import cell, image_shown, open_grid
from test_journeys import assert_clean, dark_theme
from test_studio import JOB_TIMEOUT, kernel_json

DOCS_DARK = Path(__file__).parents[2] / "docs" / "compare-dark.png"
PROMPTS = ["a lighthouse at dusk", "a red fox in snow"]
MODELS = ["pixel-1", "pixel-pro"]


def ids(notebook) -> dict[str, str]:
    return kernel_json(
        notebook, "{f\"{c['row']},{c['col']}\": c['generation_id'] for c in grid.cells}"
    )


def test_rate_add_a_column_rerun_and_export_from_the_grid_in_the_dark_theme(
    lab, tmp_path, tenant_factory
):
    seen = len(lab.console)
    notebook, grid = open_grid(lab, tmp_path, tenant_factory, "controls.ipynb", PROMPTS, MODELS)
    run = grid.get_by_role("button", name="Run", exact=True)
    expect(run).to_be_enabled(timeout=JOB_TIMEOUT)
    run.click()
    for row, col in [(r, c) for r in range(2) for c in range(2)]:
        expect(cell(grid, row, col)).to_have_attribute(
            "data-status", "completed", timeout=JOB_TIMEOUT
        )

    # stars: a rating per cell, beside the winner
    cell(grid, 0, 1).get_by_role("button", name="Choose").click()
    cell(grid, 0, 0).get_by_role("button", name="Rate 4 of 5, pixel-1, prompt 1").click()
    cell(grid, 1, 1).get_by_role("button", name="Rate 2 of 5, pixel-pro, prompt 2").click()
    stars = cell(grid, 0, 0).locator('.mg-compare-star[aria-pressed="true"]')
    expect(stars).to_have_count(4)
    expect(cell(grid, 1, 1).locator('.mg-compare-star[aria-pressed="true"]')).to_have_count(2)
    judged = kernel_json(
        notebook,
        "{'rating': grid.choices['rating'].fillna(0).tolist(),"
        " 'chosen': grid.choices['chosen'].tolist()}",
    )
    assert judged == {"rating": [4, 0, 2], "chosen": [False, True, False]}  # 0: not rated

    # Add column: priced at once, the next Run pays for its two cells only
    before = ids(notebook)
    grid.get_by_role("textbox", name="Model for a new column").fill("lumen-4k")
    grid.get_by_role("button", name="Add column").click()
    expect(grid.locator(".mg-compare-column")).to_have_count(3)
    expect(cell(grid, 1, 2)).to_have_attribute("data-status", "priced", timeout=JOB_TIMEOUT)
    expect(grid.locator(".mg-compare-total")).to_contain_text("Run: 4 cr")
    expect(run).to_be_enabled()
    run.click()
    expect(cell(grid, 1, 2)).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    expect(cell(grid, 0, 2)).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    after = ids(notebook)
    assert {k: after[k] for k in before} == before, "the earlier cells were not run again"

    # Re-run a row, then a column: new generations there, the rest kept
    rerun_row = grid.get_by_role("button", name="Re-run row 2")
    expect(rerun_row).to_be_enabled()
    rerun_row.click()
    for col in range(3):
        expect(cell(grid, 1, col)).to_have_attribute(
            "data-status", "completed", timeout=JOB_TIMEOUT
        )
    expect(rerun_row).to_be_enabled(timeout=JOB_TIMEOUT)  # the run has ended
    rows = ids(notebook)
    assert all(rows[f"1,{c}"] != after[f"1,{c}"] for c in range(3))
    assert all(rows[f"0,{c}"] == after[f"0,{c}"] for c in range(3))
    grid.get_by_role("button", name="Re-run column pixel-1").click()
    expect(cell(grid, 0, 0)).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    expect(grid.get_by_role("button", name="Re-run column pixel-1")).to_be_enabled(
        timeout=JOB_TIMEOUT
    )
    cols = ids(notebook)
    assert cols["0,0"] != rows["0,0"]
    assert cols["1,0"] != rows["1,0"]
    assert cols["0,1"] == rows["0,1"]
    image_shown(cell(grid, 0, 0))

    # Export HTML: the report is written beside the notebook
    grid.get_by_role("textbox", name="Report file name").fill("grid-report.html")
    grid.get_by_role("button", name="Export HTML").click()
    expect(grid.locator(".mg-compare-exported")).to_have_text("Exported grid-report.html")
    report = kernel_json(notebook, "open('grid-report.html').read()[:15]")
    assert report == "<!doctype html>"

    # the dark theme: the grid follows JupyterLab's colours
    with dark_theme(lab.page):
        background = grid.evaluate("(el) => getComputedStyle(el).backgroundColor")
        channels = [int(c) for c in background[background.index("(") + 1 : -1].split(",")[:3]]
        assert max(channels) < 100, f"the grid stayed light in the dark theme: {background}"
        for row, col in [(r, c) for r in range(2) for c in range(3)]:
            image_shown(cell(grid, row, col))
        grid.scroll_into_view_if_needed()
        lab.page.evaluate(
            "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        shot = tmp_path / "compare-dark.png"
        grid.screenshot(path=str(shot))
        assert shot.read_bytes().startswith(b"\x89PNG")

    assert_clean(notebook)
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"
    if os.environ.get("MEDIAGEN_UPDATE_SCREENSHOT"):  # refresh the README's picture on request
        DOCS_DARK.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_DARK)

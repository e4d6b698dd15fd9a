"""``mediagen.compare`` in real JupyterLab 4 and Chromium, against the real sandbox: a 3x3 grid
priced before it runs, run by its button, media in the cells, a failed row retried, winners
clicked, the page reloaded and the saved run reopened. Any Python error, error banner or console
error fails it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import expect
from test_journeys import assert_clean, reload
from test_studio import JOB_TIMEOUT, kernel_json, plays, wait_loaded

DOCS_SCREENSHOT = Path(__file__).parents[2] / "docs" / "compare.png"
PROMPTS = ["a lighthouse at dusk", "a red fox in snow", "a storm at sea [[fail:safety]]"]
MODELS = ["pixel-1", "pixel-pro", "voxa-tts"]


def compare_cell(cache: Path, key_file: Path, prompts: list[str], models: list[str]) -> str:
    """The grid on its own organization (the key read from a file: never in the notebook), so
    its generations do not show up in other tests' history."""
    return (
        "import mediagen, pathlib\n"
        f"client = mediagen.Client(api_key=pathlib.Path({str(key_file)!r}).read_text(),"
        f" cache_dir={str(cache)!r}, poll_interval=0.1)\n"
        f"grid = mediagen.compare({prompts!r}, {models!r}, client)\n"
        "grid"
    )


def open_grid(lab, tmp_path, tenant_factory, name, prompts=PROMPTS, models=MODELS, tenant=None):
    """(notebook, grid locator): a notebook whose first cell shows a fresh grid (of a new
    tenant's, unless ``tenant`` is given), run."""
    key_file = tmp_path / "key"
    tenant = tenant or tenant_factory(balance=1000, plan="enterprise")
    key_file.write_text(tenant.api_key)
    cells = [compare_cell(tmp_path / "cache", key_file, prompts, models)]
    notebook = lab.open(name, cells)
    notebook.run_all()
    return notebook, notebook.output(0).locator(".mg-compare")


def cell(grid, row: int, col: int):
    return grid.locator(f'.mg-compare-cell[data-row="{row}"][data-col="{col}"]')


def image_shown(where) -> list[int]:
    """The cell's image, once loaded (scrolled to first: media load only when in view)."""
    where.scroll_into_view_if_needed()
    image = where.locator("img")
    image.wait_for()
    image.evaluate(
        "(el) => (el.complete && el.naturalWidth)"
        " || new Promise((r) => el.addEventListener('load', r, {once: true}))"
    )
    assert image.evaluate("(el) => el.src").startswith("blob:")
    return image.evaluate("(el) => [el.naturalWidth, el.naturalHeight]")


def test_a_three_by_three_grid_is_priced_run_judged_and_survives_a_reload(
    lab, tmp_path, tenant_factory
):
    seen = len(lab.console)
    notebook, grid = open_grid(lab, tmp_path, tenant_factory, "compare.ipynb")
    total = grid.locator(".mg-compare-total")
    expect(total).to_contain_text("Total", timeout=JOB_TIMEOUT)

    # priced, not spent: the total is the kernel's sum of estimates, and no cell has a job
    before = kernel_json(
        notebook, "{'total': grid.total, 'ids': grid.results['generation_id'].tolist()}"
    )
    assert before["ids"] == [None] * 9
    expect(total).to_have_text(f"Total {before['total']:g} cr")
    expect(grid.locator('.mg-compare-cell[data-status="priced"]')).to_have_count(9)
    expect(grid.locator(".mg-compare-cell img, .mg-compare-cell audio")).to_have_count(0)

    run = grid.get_by_role("button", name="Run", exact=True)
    expect(run).to_be_enabled()
    run.click()
    for row, col in [(r, c) for r in range(3) for c in range(3)]:
        status = "failed" if row == 2 else "completed"
        expect(cell(grid, row, col)).to_have_attribute("data-status", status, timeout=JOB_TIMEOUT)
    expect(run).to_be_disabled()

    # media in the cells: images with their real size, speech that plays
    sizes = [image_shown(cell(grid, r, c)) for r in range(2) for c in range(2)]
    assert all(w > 0 and h > 0 for w, h in sizes)
    audio = cell(grid, 0, 2).locator("audio")
    audio.wait_for()
    wait_loaded(audio)
    assert plays(audio)
    expect(cell(grid, 1, 1).locator(".mg-compare-credits")).to_contain_text("cr")
    expect(cell(grid, 1, 1).locator(".mg-compare-latency")).to_contain_text("s")

    # the failed row: its error code, and a Retry that submits that cell again
    failed = cell(grid, 2, 0)
    expect(failed.locator(".mg-compare-error")).to_have_text("safety")
    first_id = kernel_json(notebook, "grid.cells[6]['generation_id']")
    failed.get_by_role("button", name="Retry").click()
    waited = notebook.append_cell("_ = await grid.wait()")  # the kernel stays usable meanwhile
    notebook.run_cell(waited)
    notebook.wait_cell_done(waited, timeout=JOB_TIMEOUT)
    retried = kernel_json(notebook, "grid.cells[6]['generation_id']")
    expect(failed).to_have_attribute("data-status", "failed", timeout=JOB_TIMEOUT)
    assert retried
    assert retried != first_id

    # winners: one per row, by clicking
    cell(grid, 0, 1).get_by_role("button", name="Choose").click()
    cell(grid, 1, 0).get_by_role("button", name="Choose").click()
    expect(cell(grid, 1, 0)).to_have_class("mg-compare-cell mg-compare-cell--chosen")
    cell(grid, 1, 2).get_by_role("button", name="Choose").click()  # changes row 2's winner
    expect(cell(grid, 1, 2).locator(".mg-compare-pick")).to_have_attribute("aria-pressed", "true")
    expect(cell(grid, 1, 2).locator(".mg-compare-pick")).to_have_text("★ Chosen")
    expect(cell(grid, 1, 0)).to_have_class("mg-compare-cell")
    picked = kernel_json(
        notebook,
        "{'models': grid.choices['model'].tolist(), 'credits': grid.choices['credits'].tolist(),"
        " 'spent': float(grid.results['credits'].fillna(0).sum())}",
    )
    assert picked["models"] == ["pixel-pro", "voxa-tts"]
    assert all(c > 0 for c in picked["credits"])
    expect(grid.locator(".mg-compare-spent")).to_have_text(f"{picked['spent']:g} cr")

    shot = tmp_path / "compare.png"
    grid.screenshot(path=str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")

    # a reload: the grid comes back from the kernel, media and winners included
    notebook.save()
    reload(lab, notebook)
    grid = notebook.output(0).locator(".mg-compare")
    expect(cell(grid, 0, 0)).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    image_shown(cell(grid, 0, 0))
    expect(cell(grid, 0, 1)).to_have_class("mg-compare-cell mg-compare-cell--chosen")
    expect(cell(grid, 2, 0).locator(".mg-compare-error")).to_have_text("safety")

    # the run saved and reopened in a new output: nothing priced or run again
    reopen = notebook.append_cell(
        f"grid.save({str(tmp_path / 'grid.parquet')!r})\n"
        f"again = mediagen.compare.load({str(tmp_path / 'grid.parquet')!r}, client)\n"
        "again"
    )
    notebook.run_cell(reopen)
    again = notebook.output(reopen).locator(".mg-compare")
    expect(cell(again, 1, 1)).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    image_shown(cell(again, 1, 1))
    expect(cell(again, 1, 2)).to_have_class("mg-compare-cell mg-compare-cell--chosen")
    expect(again.get_by_role("button", name="Run", exact=True)).to_be_disabled()
    same = kernel_json(notebook, "again.results.equals(grid.results)")
    assert same is True

    assert_clean(notebook, allowed_banners=("safety",))  # the failed row's codes
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"
    if os.environ.get("MEDIAGEN_UPDATE_SCREENSHOT"):  # refresh the README's picture on request
        DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SCREENSHOT)


def test_cells_held_by_the_key_rate_limit_say_so_in_the_page(
    lab, tmp_path, tenant_factory, sandbox
):
    """A run whose polls meet the key's rate limit: each pending cell says it waits for the
    rate limit (not a frozen cell), then every cell completes and the notes are gone."""
    seen = len(lab.console)
    prompts = ["a held kite [[slow:4]]", "a held boat [[slow:4]]"]
    tenant = tenant_factory(balance=1000, plan="enterprise")
    # the grid's key only: JupyterLab's own key (its Generations panel) keeps the server's
    with sandbox.admin.key_rate_limited(tenant.key_id, 1, burst=1):
        notebook, grid = open_grid(
            lab, tmp_path, tenant_factory, "held.ipynb", prompts, ["pixel-1"], tenant=tenant
        )
        run = grid.get_by_role("button", name="Run", exact=True)
        expect(run).to_be_enabled(timeout=JOB_TIMEOUT)
        run.click()
        note = grid.locator(".mg-compare-rate-note").first
        expect(note).to_contain_text("waiting for the rate limit (", timeout=JOB_TIMEOUT)
        expect(grid.locator('.mg-compare-cell[data-status="completed"]')).to_have_count(
            2, timeout=JOB_TIMEOUT
        )
    expect(grid.locator(".mg-compare-rate-note")).to_have_count(0)
    assert_clean(notebook)
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"

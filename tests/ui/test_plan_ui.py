"""A table's plan in real JupyterLab: the widget shows the plan's total, its rows per model,
the first rows and the row left out, in the light and the dark theme, with no Python error, no
browser console error and nothing an accessibility scan flags."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from test_journeys import assert_clean, axe_js, axe_violations, dark_theme  # noqa: F401
from test_studio import kernel_json

PLAN_CELL = """\
import pandas as pd
import mediagen as mg

client = mg.Client(cache_dir=CACHE_DIR)  # a history store of its own: none yet

table = pd.DataFrame(
    {
        "caption": ["a teapot", "a lamp", "a chair", "a kettle", "a vase", "a stool", "a rug"],
        "model": ["pixel-1", "pixel-pro", "pixel-1", "pixel-pro", "pixel-1", "pixel-1", "nope-9"],
    },
    index=[f"sku-{n}" for n in range(7)],
)
made = table.mediagen.plan(
    client, model=mg.col("model"), prompt="{caption}", on_invalid="skip", run_id="catalog-v1"
)
made"""


def with_cache(cell: str, tmp_path) -> str:
    """``cell`` with a cache (and so a history store) of the test's own."""
    return cell.replace("CACHE_DIR", repr(str(tmp_path / "cache")))


def test_a_plan_shows_its_total_and_first_rows_in_both_themes(lab, tmp_path, axe_js):  # noqa: F811
    notebook = lab.open("plan.ipynb", [with_cache(PLAN_CELL, tmp_path)])
    seen_before = len(lab.console)
    notebook.run_cell(0)
    notebook.wait_cell_done(0)
    view = notebook.output(0).locator(".mg-plan")
    expect(view).to_be_visible()
    figures = kernel_json(
        notebook,
        "{'total': made.total, 'rows': [str(r) for r in made.requests.index[:5]],"
        " 'estimates': [float(e) for e in made.requests['estimate'][:5]],"
        " 'counts': {m: int(n) for (m, _), n in made.counts()['rows'].items()}}",
    )
    assert figures["total"] > 0

    total = view.get_by_label("Total credits")
    expect(total).to_have_text(f"{figures['total']:g} credits")
    expect(view.locator(".mg-plan-rows")).to_have_text("for 6 rows")
    expect(view.locator(".mg-plan-skipped")).to_have_text("1 invalid row skipped")
    expect(view.locator(".mg-plan-run-id")).to_have_text("run_id catalog-v1")
    counts = view.get_by_role("table", name="Rows and credits per model and mode")
    expect(counts.locator("tbody tr")).to_have_count(2)
    for model, rows in figures["counts"].items():
        row = counts.get_by_role("row").filter(has_text=model)
        expect(row.locator("td").nth(2)).to_have_text(str(rows))
    sample = view.get_by_role("table", name="First rows")
    expect(sample.get_by_role("rowheader")).to_have_text(figures["rows"])
    expect(sample.locator("tbody td.mg-num")).to_have_text([f"{e:g}" for e in figures["estimates"]])
    expect(sample.get_by_role("row").filter(has_text="sku-1")).to_contain_text("“a lamp”")
    skipped = view.get_by_role("group", name="Invalid rows skipped")
    expect(skipped.locator("li")).to_have_text([re.compile(r"^sku-6: model: no model 'nope-9'")])
    expect(view.locator(".mg-plan-forecast")).to_contain_text("Too little history")
    # the snapshot output beside it carries the same total, hidden while the view lives
    expect(notebook.snapshot(0)).to_be_hidden()
    expect(notebook.snapshot(0)).to_contain_text(f"{figures['total']:g} credits")

    assert axe_violations(lab.page, axe_js, view) == []
    light = view.evaluate("(el) => getComputedStyle(el).backgroundColor")
    with dark_theme(lab.page):
        expect(total).to_have_text(f"{figures['total']:g} credits")
        background = view.evaluate("(el) => getComputedStyle(el).backgroundColor")
        channels = [int(c) for c in background[background.index("(") + 1 : -1].split(",")[:3]]
        assert max(channels) < 100, f"the plan stayed light in the dark theme: {background}"
        assert axe_violations(lab.page, axe_js, view) == []
    assert background != light

    assert_clean(notebook)
    errors = [m for m in lab.console[seen_before:] if m.startswith("error")]
    assert not errors, errors


HISTORY_CELL = """\
import pandas as pd
import mediagen as mg

client = mg.Client(cache_dir=CACHE_DIR, poll_interval=0.05)
jobs = [client.images.create(model="pixel-1", prompt="a lighthouse") for _ in range(5)]
jobs.append(client.images.create(model="pixel-1", prompt="refused [[fail:safety]]"))
list(client.generations.watch(jobs, timeout=60, download=False))
client.generations.to_dataframe()  # the local history store, synced
table = pd.DataFrame({"caption": ["a teapot", "a lamp", "a chair"]})
made = table.mediagen.plan(client, model="pixel-1", prompt="{caption}")
made"""


def test_with_history_the_plan_shows_its_time_and_failures_forecast(lab, tmp_path):
    notebook = lab.open("plan-history.ipynb", [with_cache(HISTORY_CELL, tmp_path)])
    index = 0
    seen_before = len(lab.console)
    notebook.run_cell(index)
    notebook.wait_cell_done(index)
    view = notebook.output(index).locator(".mg-plan")
    forecast = kernel_json(
        notebook,
        "(lambda f: [mg.display._progress.format_seconds(f.p50_seconds),"
        " mg.display._progress.format_seconds(f.p90_seconds), f.expected_failures])"
        "(made.forecast())",
    )
    p50, p90, failures = forecast
    expect(view.locator(".mg-plan-forecast")).to_have_text(
        f"About {p50} (p90 {p90}) · {f'{failures:.2f}'.rstrip('0').rstrip('.')} failures expected"
    )
    assert_clean(notebook)
    errors = [m for m in lab.console[seen_before:] if m.startswith("error")]
    assert not errors, errors


def test_running_the_plan_moves_its_shown_view_to_the_end(lab, tmp_path):
    """The plan shown in one cell, run in the next: the view says how the run goes (rows done,
    credits, time left) and how it ended, in the page, with no Python or console error."""
    notebook = lab.open("plan-run.ipynb", [with_cache(PLAN_CELL, tmp_path),
                                           "out = made.run(progress=False)"])  # fmt: skip
    seen_before = len(lab.console)
    notebook.run_cell(0)
    notebook.wait_cell_done(0)
    view = notebook.output(0).locator(".mg-plan")
    expect(view).to_be_visible()
    expect(view.locator(".mg-plan-progress")).to_have_count(0)  # nothing run yet
    notebook.run_cell(1)
    notebook.wait_cell_done(1)
    progress = view.get_by_role("status")
    expect(progress).to_contain_text(re.compile(r"^Run done: 6 rows, 0 failed, [\d.]+ credits in "))
    figures = kernel_json(notebook, "{'done': int((out['status'] == 'completed').sum())}")
    assert figures["done"] == 6
    assert_clean(notebook)
    errors = [m for m in lab.console[seen_before:] if m.startswith("error")]
    assert not errors, errors

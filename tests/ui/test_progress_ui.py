"""A wait's progress in real JupyterLab: while the job runs, a bar (an anywidget) and a line
that says the job's status; the bar indeterminate while this machine has seen no job of the
model finish, then filling towards the usual time; the summary in its place once the job is
done. In both themes, with no Python or browser error."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from test_journeys import assert_clean, dark_theme

JOB_TIMEOUT = 60_000


def wait_cell(prompt: str) -> str:
    return (
        f"client.generations.wait(client.images.create(model='pixel-1', prompt={prompt!r}),"
        " timeout=60).status"
    )


def test_a_wait_shows_a_live_bar_then_its_summary_in_both_themes(lab, tmp_path):
    notebook = lab.open(
        "progress.ipynb",
        [
            "%load_ext mediagen\n"
            "import mediagen as mg\n"
            f"client = mg.Client(cache_dir={str(tmp_path / 'cache')!r})",
            wait_cell("a kite [[slow:4]]"),
            wait_cell("a kite again [[slow:4]]"),
        ],
    )
    seen_before = len(lab.console)
    notebook.run_cell(0)
    notebook.wait_cell_done(0)

    # no job of pixel-1 finished here yet: an indeterminate bar (no value), the status beside it
    notebook.start_cell(1)
    first = notebook.output(1)
    bar = first.get_by_role("progressbar", name=re.compile(r"^Waiting for generation "))
    expect(bar).to_be_visible(timeout=JOB_TIMEOUT)
    assert bar.get_attribute("value") is None
    expect(first.locator(".mg-progress-line")).to_contain_text("pending · pixel-1")
    # the shared sheet reached it: the title, bar and line in one row
    assert first.locator(".mg-progress").evaluate("(el) => getComputedStyle(el).display") == "flex"
    notebook.wait_cell_done(1, timeout=JOB_TIMEOUT)
    expect(bar).to_have_count(0)  # replaced in place by its summary
    expect(first.locator(".mediagen-progress-summary")).to_contain_text(
        re.compile(r"completed · pixel-1 · [\d.]+ credits charged · done in ")
    )
    expect(first.filter(has_text="'completed'")).to_have_count(1)

    # one finished: the next wait fills towards the usual time, and says it; the dark theme
    with dark_theme(lab.page):
        notebook.start_cell(2)
        second = notebook.output(2)
        bar = second.get_by_role("progressbar")
        expect(bar).to_have_attribute("max", "1000", timeout=JOB_TIMEOUT)
        expect(second.locator(".mg-progress-line")).to_contain_text("(usually ~")
        colour = second.locator(".mg-progress-line").evaluate("(el) => getComputedStyle(el).color")
        channels = [int(c) for c in re.findall(r"\d+", colour)[:3]]
        assert min(channels) > 100, f"the line stayed dark in the dark theme: {colour}"
        notebook.wait_cell_done(2, timeout=JOB_TIMEOUT)
        expect(second.locator(".mediagen-progress-summary")).to_contain_text("done in")

    assert_clean(notebook)
    errors = [m for m in lab.console[seen_before:] if m.startswith("error")]
    assert not errors, errors

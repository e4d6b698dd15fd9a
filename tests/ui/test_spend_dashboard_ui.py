"""The spend dashboard in real JupyterLab and Chromium: every control a user can touch, clicked,
and what it chose read back from the kernel; the plots redrawn dark with the theme; axe in both
themes."""

from __future__ import annotations

from lab_harness import click_through_redraw
from playwright.sync_api import expect
from test_gallery_ui import CORNER_PIXEL, set_theme
from test_journeys import axe_js, axe_violations
from test_studio import JOB_TIMEOUT, kernel_json

__all__ = ["axe_js"]  # the fixture, used by name


def dashboard_cell(key_file, cache) -> str:
    """Three images and a failed one, by a tenant of their own, then the dashboard."""
    return (
        "import mediagen, pathlib\n"
        f"client = mediagen.Client(api_key=pathlib.Path({str(key_file)!r}).read_text(),"
        f" cache_dir={str(cache)!r}, poll_interval=0.1)\n"
        "for prompt in ('a kite', 'a boat', 'a fox', 'a storm [[fail:timeout]]'):\n"
        "    client.images.create(model='pixel-1', prompt=prompt).wait()\n"
        "board = mediagen.spend_dashboard(client, page_size=3)\n"
        "board"
    )


def redrawn(page, plot, before: str | None) -> None:
    """Wait until the plot shows another image than ``before``."""
    page.wait_for_function(
        "([img, before]) => img.getAttribute('src') && img.getAttribute('src') !== before",
        arg=[plot.element_handle(), before],
    )


def test_every_control_of_the_dashboard_reaches_the_kernel(lab, tmp_path, tenant_factory, axe_js):
    seen = len(lab.console)
    key_file = tmp_path / "key"
    key_file.write_text(tenant_factory(balance=1000).api_key)
    notebook = lab.open("spend.ipynb", [dashboard_cell(key_file, tmp_path / "cache")])
    notebook.run_all()
    page = lab.page
    board = notebook.output(0).locator(".mediagen-spend-dashboard")
    board.wait_for(timeout=JOB_TIMEOUT)
    summary = board.get_by_role("group", name="Spend summary")
    expect(summary).to_contain_text("4 (3 completed, 1 failed, 0 pending)", timeout=JOB_TIMEOUT)
    rows = board.locator(".mg-dash-table tbody tr")
    assert axe_violations(page, axe_js, board) == []
    label = board.locator(".mg-dash-page")

    # paging
    previous = board.get_by_role("button", name="Previous")
    following = board.get_by_role("button", name="Next")
    expect(label).to_have_text("page 1 of 2 (4 rows)")
    expect(previous).to_be_disabled()
    following.click()
    expect(label).to_have_text("page 2 of 2 (4 rows)")
    expect(rows).to_have_count(1)
    expect(following).to_be_disabled()
    assert kernel_json(notebook, "board.page") == 1
    previous.click()
    expect(label).to_have_text("page 1 of 2 (4 rows)")

    # sorting by a header: descending first, then ascending
    prompt_header = board.locator("th").filter(has_text="Prompt")
    prompt_header.get_by_role("button").click()
    expect(prompt_header).to_have_attribute("aria-sort", "descending")
    expect(rows.first).to_contain_text("a storm")
    prompt_header.get_by_role("button").click()
    expect(prompt_header).to_have_attribute("aria-sort", "ascending")
    expect(rows.first).to_contain_text("a boat")
    assert kernel_json(notebook, "[board.sort_by, board.descending]") == ["prompt", False]
    # a header pressed while the kernel redraws the table (here Python turns the page) still
    # sorts when released

    def python_turns_the_page() -> None:  # the columns fit the new rows
        notebook.run_in_kernel("board.page = 1")
        expect(label).to_have_text("page 2 of 2 (4 rows)")

    click_through_redraw(page, prompt_header.get_by_role("button"), python_turns_the_page)
    expect(prompt_header).to_have_attribute("aria-sort", "descending")
    assert kernel_json(notebook, "[board.sort_by, board.descending]") == ["prompt", True]

    # searching, typed as a user types
    search = board.get_by_role("searchbox", name="Search the table")
    search.press_sequentially("fox", delay=40)
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("a fox")
    expect(label).to_have_text("page 1 of 1 (1 rows)")
    assert kernel_json(notebook, "board.search") == "fox"
    search.fill("")
    expect(label).to_have_text("page 1 of 2 (4 rows)")

    # filters
    board.get_by_label("Status").select_option("failed")
    expect(summary).to_contain_text("1 (0 completed, 1 failed, 0 pending)")
    assert kernel_json(notebook, "board.status") == "failed"
    board.get_by_label("Status").select_option("")
    board.get_by_label("From").fill("2099-01-01")
    expect(board.get_by_text("No generations match these filters.")).to_be_visible()
    assert kernel_json(notebook, "board.since") == "2099-01-01"
    board.get_by_label("From").fill("")
    expect(summary).to_contain_text("4 (3 completed, 1 failed, 0 pending)")
    # the kernel sends the headline, the plot, then the page label: with the label, the plot
    # of this range is in (a redraw still on its way would pass for the period's below)
    expect(label).to_have_text("page 1 of 2 (4 rows)")
    # the period: the kernel redraws the plot (the page sends one change at a time, so a
    # cell run now could be ahead of it: wait for what the kernel sends back)
    plot = board.locator(".mg-dash-plot")
    daily = plot.get_attribute("src")
    board.get_by_label("Per").select_option("W")
    redrawn(page, plot, daily)
    assert kernel_json(notebook, "board.period") == "W"

    # plot tabs, by click and by arrow key, each drawn by the kernel when first shown
    weekly = plot.get_attribute("src")
    board.get_by_role("tab", name="Spend per model").click()
    expect(board.get_by_role("tab", name="Spend per model")).to_have_attribute(
        "aria-selected", "true"
    )
    expect(plot).to_have_attribute("alt", "Credits charged per model")
    redrawn(page, plot, weekly)
    per_model = plot.get_attribute("src")
    page.keyboard.press("ArrowRight")
    expect(board.get_by_role("tab", name="Latency")).to_have_attribute("aria-selected", "true")
    expect(board.get_by_role("tab", name="Latency")).to_be_focused()
    expect(plot).to_have_attribute("alt", "Time to finish per model")
    redrawn(page, plot, per_model)
    assert kernel_json(notebook, "board.plot_tab") == 2

    # refresh: a job made since shows
    more = notebook.append_cell("client.images.create(model='pixel-1', prompt='a owl').wait().id")
    notebook.run_cell(more)
    notebook.wait_cell_done(more, timeout=JOB_TIMEOUT)
    board.get_by_role("button", name="Refresh").click()
    expect(summary).to_contain_text("5 (4 completed, 1 failed, 0 pending)", timeout=JOB_TIMEOUT)
    expect(board.locator(".mg-dash-status")).to_contain_text("Updated")

    # the theme: the plot is redrawn dark, and light again
    board.get_by_role("tab", name="Spend over time").click()
    handle = plot.element_handle()
    page.wait_for_function(f"(img) => ({CORNER_PIXEL})(img)?.[0] > 200", arg=handle)
    set_theme(page, "JupyterLab Dark")
    try:
        page.wait_for_function(
            f"(img) => {{ const p = ({CORNER_PIXEL})(img); return p && Math.max(...p) < 60; }}",
            arg=handle,
            timeout=20_000,
        )
        assert kernel_json(notebook, "board.dark") is True
        assert axe_violations(page, axe_js, board) == []
    finally:
        set_theme(page, "JupyterLab Light")
    page.wait_for_function(f"(img) => ({CORNER_PIXEL})(img)?.[0] > 200", arg=handle, timeout=20_000)
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == []

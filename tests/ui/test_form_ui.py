"""Picker and form in real JupyterLab: clicks reach the kernel, issues show inline."""

from __future__ import annotations

import json
from pathlib import Path

from lab_harness import click_through_redraw
from playwright.sync_api import expect

CATALOG = Path(__file__).parents[1] / "widgets" / "catalog_entries.py"


def test_pick_a_model_edit_the_form_and_read_the_request(lab):
    notebook = lab.open(
        "form.ipynb",
        [
            f"exec(open({str(CATALOG)!r}).read())\n"
            "from mediagen.widgets import ModelPicker, RequestForm\n"
            "picker = ModelPicker([VIDEO, SPEECH, IMAGE])\n"
            "form = RequestForm()\n"
            "picker.observe(lambda change: form.load(picker.entry), 'value')",
            "picker",
            "form",
        ],
    )
    notebook.run_all()
    page = lab.page
    picker = notebook.output(1)
    picker.get_by_role("option").first.wait_for()
    assert picker.get_by_role("option").count() == 3
    picker.get_by_role("radio", name="Audio").click()
    picker.get_by_role("option", name="Voxa 1").wait_for()
    page.wait_for_function(
        "(el) => el.querySelectorAll('[role=option]').length === 1", arg=picker.element_handle()
    )
    picker.get_by_role("radio", name="All").click()
    picker.get_by_role("searchbox", name="Search models").fill("vidra")
    picker.get_by_role("option", name="Vidra 2").click()

    form = notebook.output(2)
    prompt = form.get_by_role("textbox", name="Prompt", exact=True)
    prompt.wait_for()
    assert prompt.input_value() == "a red fox"  # example_request as the start
    assert form.get_by_role("combobox", name="Tier", exact=True).input_value() == '"720p"'
    form.get_by_role("combobox", name="Duration seconds", exact=True).select_option(label="10")
    duration = form.get_by_role("combobox", name="Duration seconds", exact=True)
    duration.locator("option", has_text="10").wait_for(state="attached")
    page.wait_for_function("(el) => el.value === '10'", arg=duration.element_handle())
    form.get_by_role("combobox", name="Tier", exact=True).select_option(label="1080p")
    # the kernel narrows the duration choices to the 1080p ones (— and 5) and flags 10 s
    expect(form.locator("[data-field=duration_seconds] option")).to_have_count(2)
    issue = form.locator("[data-field=duration_seconds] .mg-field-issue")
    expect(issue).to_contain_text("not available at 1080p")
    assert (
        form.get_by_role("combobox", name="Duration seconds", exact=True).get_attribute(
            "aria-invalid"
        )
        == "true"
    )
    form.get_by_role("combobox", name="Tier", exact=True).select_option(label="720p")
    expect(issue).to_have_text("")
    prompt.fill("a fox in the snow")
    page.wait_for_timeout(400)  # the form debounces typing (200 ms) before telling the kernel

    index = notebook.append_cell("import json; print(json.dumps(form.request))")
    notebook.run_cell(index)
    notebook.wait_cell_done(index)
    request = json.loads(notebook.output(index).inner_text())
    assert request == {
        "model": "vidra-2",
        "mode": "text_to_video",
        "prompt": "a fox in the snow",
        "tier": "720p",
        "duration_seconds": 10,
        "aspect_ratio": "16:9",
    }


def test_a_click_on_a_model_survives_the_list_redrawn_under_the_pointer(lab):
    """The kernel's answer to a filter can redraw the list between a press and its release:
    the option pressed must still be the one chosen (a browser drops the click of an element
    that left the page)."""
    notebook = lab.open(
        "picker-redraw.ipynb",
        [
            f"exec(open({str(CATALOG)!r}).read())\n"
            "from mediagen.widgets import ModelPicker\n"
            "picker = ModelPicker([VIDEO, SPEECH, IMAGE])",
            "picker",
            "picker.query = 'vidra'",
            "print(repr(picker.value))",
        ],
    )
    notebook.run_cell(0)
    notebook.run_cell(1)
    picker = notebook.output(1)
    option = picker.get_by_role("option", name="Vidra 2")
    option.wait_for()

    def the_kernel_filters() -> None:  # a new list of options reaches the page
        notebook.run_cell(2)
        expect(picker.get_by_role("option")).to_have_count(1)

    click_through_redraw(lab.page, option, the_kernel_filters)
    expect(option).to_have_attribute("aria-selected", "true")
    notebook.run_cell(3)
    notebook.wait_cell_done(3)
    assert notebook.output(3).inner_text().strip() == "'vidra-2'"

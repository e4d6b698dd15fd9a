"""User journeys through ``mediagen.studio()`` in real JupyterLab and Chromium, on the sandbox.

Each journey is what a user does by clicking and typing, followed to the end: choosing models
by keyboard, typing and choosing at speed, making an image and saving, downloading and chaining
it, being refused for credits and topping up, reloading the page, switching to the dark theme
and restarting the kernel. Every journey fails on any Python error the studio prints into the
notebook, any error banner it did not expect, and any browser console error; an axe-core scan
of the studio must find no violations.

Each journey has its own organization (its key reaches the kernel through a file, never the
notebook's text), so a balance set here cannot disturb another test.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
from media_files import make_png
from playwright.sync_api import expect
from test_studio import JOB_TIMEOUT, STALE, kernel_json, pick, submit_when_priced

AXE_VERSION = "4.10.2"
STDERR = "[data-mime-type='application/vnd.jupyter.stderr']"


@pytest.fixture(scope="session")
def axe_js(tmp_path_factory) -> Path:
    """axe-core's browser build, from npm (``npm pack``; the registry is the only source)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("the accessibility scan needs npm (scripts/setup-test-deps) to fetch axe-core")
    where = tmp_path_factory.mktemp("axe")
    subprocess.run(
        [npm, "pack", f"axe-core@{AXE_VERSION}", "--silent", "--pack-destination", str(where)],
        check=True,
        capture_output=True,
        timeout=180,
    )
    [tarball] = where.glob("axe-core-*.tgz")
    with tarfile.open(tarball) as archive:
        member = archive.getmember("package/axe.min.js")
        path = where / "axe.min.js"
        path.write_bytes(archive.extractfile(member).read())  # type: ignore[union-attr]
    return path


@pytest.fixture
def journey(lab, tenant_factory, tmp_path):
    """An open notebook with a studio on a fresh organization; checks the page stays clean."""
    tenant = tenant_factory(balance=5000, plan="enterprise")
    key_file = tmp_path / "key"
    key_file.write_text(tenant.api_key)
    saves = tmp_path / "saved"
    cell = (
        "import mediagen, pathlib\n"
        f"client = mediagen.Client(api_key=pathlib.Path({str(key_file)!r}).read_text(),"
        f" cache_dir={str(tmp_path / 'cache')!r})\n"
        "studio = mediagen.studio(client, poll_interval=0.1, poll_cap=0.5, debounce=0.1,"
        f" save_dir={str(saves)!r})\n"
        "studio"
    )
    seen = len(lab.console)
    notebook = lab.open(f"journey-{tmp_path.name}.ipynb", [cell])
    notebook.run_all()
    studio = notebook.output(0)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    notebook.tenant, notebook.saves = tenant, saves  # type: ignore[attr-defined]
    yield notebook
    try:
        assert_clean(notebook)
        errors = [line for line in lab.console[seen:] if line.startswith("error")]
        assert errors == [], f"browser console errors: {errors}"
    finally:
        key_file.unlink()


def assert_clean(notebook, allowed_banners: tuple[str, ...] = ()) -> None:
    """No Python error in any output, and no widget error banner but the ones expected."""
    panel = f"#{notebook._panel_id()}"
    outputs = notebook.page.locator(f"{panel} .jp-OutputArea-output").all_inner_texts()
    printed = [text for text in outputs if "Traceback" in text or "Error displaying" in text]
    stderr = notebook.page.locator(f"{panel} {STDERR}").all_inner_texts()
    assert stderr == [], f"Python errors in the notebook: {stderr}"
    assert printed == [], f"Python errors in the notebook: {printed}"
    banners = [
        text
        for text in notebook.page.locator(f"{panel} .mg-error").all_inner_texts()
        if text.strip() and not (allowed_banners and text.startswith(allowed_banners))
    ]
    assert banners == [], f"error banners: {banners}"


def kernel_until(notebook, expression: str, check, attempts: int = 20):
    """``expression`` in the kernel once ``check(value)`` holds (each try is a new cell).

    An edit sent from the page reaches the kernel as a widget message that ipywidgets may hold
    back while an earlier one is unanswered, so a cell run right after a click can come first.
    """
    for _ in range(attempts):
        value = kernel_json(notebook, expression)
        if check(value):
            return value
    raise AssertionError(f"the kernel never got there: {expression} = {value!r}")


def axe_violations(page, axe_js: Path, element) -> list[str]:
    """axe-core's violations inside ``element`` (its id, impact and the offending nodes)."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(path=str(axe_js))
    found = element.evaluate(
        "async (el) => (await axe.run(el, {resultTypes: ['violations']})).violations"
        ".map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.html).join(' | ')}`)"
    )
    return found


def focused(page) -> str:
    """What has the keyboard focus: its role/label/text (the page body says 'BODY')."""
    return page.evaluate(
        """() => {
            const el = document.activeElement;
            if (!el || el === document.body) return 'BODY';
            return `${el.getAttribute('role') || el.tagName}:${
                el.getAttribute('aria-label') || el.textContent.trim().slice(0, 40)}`;
        }"""
    )


def focus_ring_visible(element) -> bool:
    """Focused from the keyboard, the element shows an outline unlike its own fill."""
    facts = element.evaluate(
        """(el) => {
            const style = getComputedStyle(el);
            return {visible: el.matches(':focus-visible'), style: style.outlineStyle,
                    width: parseFloat(style.outlineWidth), color: style.outlineColor,
                    fill: style.backgroundColor};
        }"""
    )
    assert facts["visible"], facts
    assert facts["style"] != "none", facts
    assert facts["width"] >= 2, facts
    assert facts["color"] != facts["fill"], facts
    return True


def test_keyboard_kind_filters_forms_and_fast_edits(lab, journey, axe_js, tmp_path):
    page, studio = lab.page, journey.output(0)
    picker = studio.locator(".mg-picker")
    chips = picker.get_by_role("radio")

    form = studio.locator(".mg-form")
    expect(form.get_by_role("button", name="Start from example")).to_be_disabled()  # no model yet

    # the kind filters are one Tab stop, arrows move the choice and the focus with it
    picker.get_by_role("searchbox", name="Search models").focus()
    page.keyboard.press("Shift+Tab")
    assert focused(page) == "radio:All"
    assert [c.get_attribute("tabindex") for c in chips.all()] == ["0", "-1", "-1", "-1"]
    page.keyboard.press("ArrowRight")
    expect(picker.get_by_role("radio", name="Image")).to_have_attribute("aria-checked", "true")
    assert focused(page) == "radio:Image"
    expect(picker.locator("[role=option][data-type=video]")).to_have_count(0)
    page.keyboard.press("Space")  # Space on the checked chip: the focus stays on it
    assert focused(page) == "radio:Image"
    assert focus_ring_visible(picker.get_by_role("radio", name="Image"))
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")  # wraps around to the last
    expect(picker.get_by_role("radio", name="Audio")).to_have_attribute("aria-checked", "true")
    assert focused(page) == "radio:Audio"
    page.keyboard.press("Tab")  # out of the group in one step
    assert focused(page) == "INPUT:Search models"
    picker.get_by_role("radio", name="All").click()
    picker.get_by_role("searchbox", name="Search models").fill("speech")
    expect(picker.get_by_role("option")).to_have_count(1)
    picker.get_by_role("searchbox", name="Search models").fill("")
    expect(picker.get_by_role("option").nth(1)).to_be_visible()  # the whole list is back
    listbox = picker.get_by_role("listbox", name="Models")
    listbox.focus()
    page.keyboard.press("Home")  # the model list: Home, then arrows, choose from the keyboard
    first = picker.get_by_role("option").first
    expect(first).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    expect(picker.get_by_role("option").nth(1)).to_have_attribute("aria-selected", "true")
    expect(form.locator(".mg-title")).not_to_have_text("Request (choose a model)")

    # typing, then choosing in a dropdown at once: both reach the kernel
    pick(studio, "Audio", "voxa-tts")
    form = studio.locator(".mg-form")
    text = form.get_by_role("textbox", name="Text", exact=True)
    text.fill("")
    text.press_sequentially("Every word counts")
    form.get_by_role("combobox", name="Model size", exact=True).select_option(label="large")
    expect(studio.locator(".mg-estimate-figures")).not_to_have_class(STALE)
    expect(studio.get_by_role("button", name="Submit")).to_be_enabled()
    request = kernel_until(journey, "studio.form.request", lambda r: r.get("model_size") == "large")
    assert request["text"] == "Every word counts"

    # Upload…: a local file becomes a reference input of the form
    pick(studio, "Image", "pixel-1")
    references = form.locator("[data-field=reference_images]")
    with page.expect_file_chooser() as chooser:
        references.get_by_role("button", name="Upload…").click()
    chooser.value.set_files(make_png(tmp_path / "mine.png", width=64, height=48))
    expect(references.locator("option:checked")).to_have_text(
        "mine.png (uploaded)", timeout=JOB_TIMEOUT
    )
    request = kernel_until(journey, "studio.form.request", lambda r: "reference_images" in r)
    assert re.fullmatch(r"asset_\w+", request["reference_images"][0])

    # an emptied required field: no price and no "allowed" are left standing
    figures = studio.locator(".mg-estimate-figures")
    expect(figures).to_contain_text("Allowedyes")
    form.get_by_role("textbox", name="Prompt", exact=True).fill("")
    expect(studio.locator(".mg-estimate-reason")).to_have_text("Fix the form: Prompt is required")
    expect(figures.locator(".mg-estimate-row")).to_have_count(0)
    expect(studio.get_by_role("button", name="Submit")).to_be_disabled()

    # Pixel Pro: one Size question (presets as its second group); help text on the page
    pick(studio, "Image", "pixel-pro")
    form = studio.locator(".mg-form")
    expect(form.locator(".mg-title")).to_have_text("Request · Pixel Pro")
    size = form.get_by_role("combobox", name="Size", exact=True)
    expect(size.locator("optgroup")).to_have_count(2)
    expect(form.get_by_text("Image size", exact=True)).to_have_count(0)
    expect(form.locator("[data-field=prompt] .mg-field-help")).to_have_text("Text prompt.")
    size.select_option(label="landscape_16_9")
    expect(studio.locator(".mg-estimate-figures")).not_to_have_class(STALE)
    request = kernel_until(journey, "studio.form.request", lambda r: "image_size" in r)
    assert request["image_size"] == "landscape_16_9"
    assert "size" not in request

    # Voxa TTS: the common fields, the rest behind a closed "Advanced"
    pick(studio, "Audio", "voxa-tts")
    advanced = form.locator("details.mg-form-advanced")
    expect(advanced).not_to_have_attribute("open", "")
    expect(form.locator(".mg-form-fields").first.locator(".mg-field")).to_have_count(4)
    expect(advanced.locator("summary")).to_have_text("Advanced (17 more)")
    expect(form.get_by_role("textbox", name="Voice embedding id")).to_be_hidden()
    advanced.locator("summary").click()
    expect(form.get_by_role("textbox", name="Voice embedding id")).to_be_visible()

    violations = axe_violations(page, axe_js, studio)
    assert violations == [], violations


def test_make_save_download_and_chain_an_image(lab, journey, axe_js):
    page, studio = lab.page, journey.output(0)
    pick(studio, "Image", "pixel-1")
    form = studio.locator(".mg-form")
    prompt = form.get_by_role("textbox", name="Prompt", exact=True)
    prompt.fill("A lighthouse at dusk, my words")
    prompt.press("Tab")  # leaving the field sends it at once
    kernel_until(journey, "studio.form.values['prompt']", lambda p: p.endswith("my words"))
    submit = studio.get_by_role("button", name="Submit")
    submit_when_priced(studio)
    card = studio.locator(".mg-job").first
    expect(card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    assert focused(page) == "BUTTON:Submit", "the focus stays on Submit after it is clicked"
    page.keyboard.press("Shift+Tab")  # focus is still inside the studio, not at the top
    page.keyboard.press("Tab")
    assert focused(page) == "BUTTON:Submit"
    assert focus_ring_visible(submit)

    # Save: into the studio's folder, and the card says where
    card.get_by_role("button", name="Save output 1").click()
    notice = card.locator(".mg-job-notice")
    expect(notice).to_contain_text("Saved output 1 to ", timeout=JOB_TIMEOUT)
    saved = Path(notice.inner_text().removeprefix("Saved output 1 to ").strip())
    assert saved.parent == journey.saves.resolve()
    assert saved.read_bytes().startswith(b"\x89PNG")
    expect(card.locator(".mg-job-save-to")).to_have_text(f"Save writes to {journey.saves}")

    # ...and into another folder, chosen in the studio
    other = journey.saves.parent / "picked"
    folder = studio.get_by_role("textbox", name="Save folder")
    folder.fill(str(other))
    expect(card.locator(".mg-job-save-to")).to_have_text(f"Save writes to {other}")
    card.get_by_role("button", name="Save output 1").click()
    expect(notice).to_have_text(f"Saved output 1 to {other / saved.name}", timeout=JOB_TIMEOUT)
    assert (other / saved.name).read_bytes() == saved.read_bytes()

    # Download: the browser gets the same file
    with page.expect_download() as download:
        card.get_by_role("button", name="Download output 1").click()
    assert download.value.suggested_filename == saved.name
    assert Path(download.value.path()).read_bytes() == saved.read_bytes()

    # "Use as reference", then a video model: the chosen image and the typed prompt carry over
    asset = kernel_json(journey, "studio.cards[0].items[0]['asset_id']")
    card.get_by_role("button", name="Use output 1 as reference").click()
    expect(notice).to_contain_text("Output 1 is now a reference input. It fills Reference")
    pick(studio, "Video", "vidra-2")
    expect(prompt).to_have_value("A lighthouse at dusk, my words")
    form.get_by_role("combobox", name="Mode").select_option(value="image_to_video")
    first_frame = form.locator("[data-field=first_frame] select")
    expect(first_frame).to_have_value(asset)
    expect(prompt).to_have_value("A lighthouse at dusk, my words")
    expect(studio.locator(".mg-estimate-figures")).not_to_have_class(STALE)
    request = kernel_until(journey, "studio.form.request", lambda r: "first_frame" in r)
    assert request["first_frame"] == asset
    assert request["prompt"] == "A lighthouse at dusk, my words"

    # "Start from example" is the one way back to the example
    form.get_by_role("button", name="Start from example").click()
    expect(first_frame).to_have_value("asset_example_image")
    expect(prompt).not_to_have_value("A lighthouse at dusk, my words")

    violations = axe_violations(page, axe_js, studio)
    assert violations == [], violations


def test_refusal_top_up_reload_dark_theme_and_kernel_restart(lab, journey, sandbox, axe_js):
    page, studio = lab.page, journey.output(0)
    org = journey.tenant.org_id
    pick(studio, "Image", "pixel-1")
    estimate = studio.locator(".mg-estimate")
    meter = studio.locator(".mg-meter-balance")
    expect(estimate.locator(".mg-estimate-price")).to_contain_text("credits")
    expect(estimate.get_by_role("button", name="Submit")).to_be_enabled()  # priced at 5,000
    expect(meter).to_have_text("5,000 available")

    # the balance falls elsewhere; Submit is refused (402): nothing is charged, both agree
    sandbox.admin.set_balance(org, 0.5)
    submit_when_priced(studio)
    banner = estimate.locator(".mg-error")
    expect(banner).to_contain_text("Not sent:")
    expect(banner).to_contain_text("Nothing was charged")
    expect(meter).to_have_text("0.5 available")
    figures = estimate.locator(".mg-estimate-figures")
    expect(figures).to_contain_text("Balance0.5 credits")
    expect(figures).to_contain_text("Affordableno")
    expect(estimate.locator(".mg-estimate-reason")).to_contain_text("Not enough credits")
    assert studio.locator(".mg-job").count() == 0
    assert_clean(journey, allowed_banners=("Not sent:",))

    # a top-up, then the meter's refresh: the banner goes, meter and estimate agree
    sandbox.admin.set_balance(org, 2500)
    studio.get_by_role("button", name="Refresh credits").click()
    expect(meter).to_have_text("2,500 available")
    expect(figures).to_contain_text("Balance2,500 credits")
    expect(figures).to_contain_text("Affordableyes")
    expect(banner).to_be_hidden()
    expect(studio.get_by_role("button", name="Submit")).to_be_enabled()

    # refused again, then the page is reloaded: the stale refusal does not come back
    sandbox.admin.set_balance(org, 0.5)
    submit_when_priced(studio)
    expect(banner).to_contain_text("Not sent:")
    sandbox.admin.set_balance(org, 3000)
    journey.save()  # as a user does before reloading (else the browser asks)
    reload(lab, journey)
    studio = journey.output(0)
    expect(studio.locator(".mg-meter-balance")).to_have_text("3,000 available", timeout=JOB_TIMEOUT)
    estimate = studio.locator(".mg-estimate")
    expect(estimate.locator(".mg-estimate-figures")).to_contain_text("Balance3,000 credits")
    expect(estimate.locator(".mg-error")).to_be_hidden()
    expect(studio.locator(".mg-form .mg-title")).to_have_text("Request · Pixel 1")

    # the dark theme: the studio follows it, and stays accessible
    with dark_theme(page):
        card = studio.locator(".mg-card").first
        dark = card.evaluate(
            "(el) => getComputedStyle(el).backgroundColor.match(/\\d+/g).slice(0, 3)"
            ".map(Number).reduce((a, b) => a + b, 0) < 3 * 96"
        )
        assert dark, "the studio's cards are dark in the dark theme"
        violations = axe_violations(page, axe_js, studio)
        assert violations == [], violations

    # a kernel restart: running the cell again gives a working studio
    journey._js("return panel.sessionContext.restartKernel();")
    journey.wait_idle()
    journey.run_cell(0)
    studio = journey.output(0)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    expect(studio.locator(".mg-meter-balance")).to_have_text("3,000 available")
    pick(studio, "Image", "pixel-1")
    submit_when_priced(studio)
    expect(studio.locator(".mg-job").first).to_have_attribute(
        "data-status", "completed", timeout=JOB_TIMEOUT
    )


def test_typing_goes_on_while_a_job_ends_and_the_saved_snapshot_follows(lab, journey):
    """The snapshot output is updated as the job ends, the widget view is not: the prompt keeps
    the focus, the caret and every letter typed, and the studio is the same DOM element."""
    page, studio = lab.page, journey.output(0)
    snapshot = journey.snapshot(0)
    expect(snapshot).to_have_count(1)
    expect(snapshot).to_be_hidden()  # the live view hides it
    pick(studio, "Image", "pixel-1")
    prompt = studio.locator(".mg-form").get_by_role("textbox", name="Prompt", exact=True)
    # the job lasts long enough to end while the user types: at speed 0 it could end, and the
    # snapshot follow, before the observer below is reset, leaving no change to wait for
    first = "A lighthouse [[slow:5]]"
    prompt.fill(first)
    prompt.press("Tab")  # leaving the field sends it at once
    kernel_until(journey, "studio.form.values['prompt']", lambda p: p == first)
    view = studio.locator(".mg-studio").first.element_handle()
    field = prompt.element_handle()
    # each change of the snapshot output: was the prompt focused, how much was typed by then
    snapshot.element_handle().evaluate(
        """(node, field) => {
            window.mgSnapshotChanges = [];
            new MutationObserver(() => window.mgSnapshotChanges.push(
                [document.activeElement === field, field.value.length]
            )).observe(node, {childList: true, subtree: true, characterData: true});
        }""",
        field,
    )
    submit_when_priced(studio)
    card = studio.locator(".mg-job").first
    card.wait_for()  # submitted (typing before that would change the request being sent)
    prompt.focus()
    # from here on the user is typing: a change before (the Submit click had the focus) is not
    # one made under their hands
    page.evaluate("() => { window.mgSnapshotChanges = []; }")
    page.keyboard.press("End")
    # type on until the job has ended and the snapshot has followed (a loaded machine may take
    # longer than one sentence), then a little more: each change then came under the user's hands
    text, deadline = first, time.monotonic() + JOB_TIMEOUT / 1000
    for words in itertools.cycle([", seen from a small boat", " on a grey evening sea"]):
        page.keyboard.type(words, delay=70)
        text += words
        ended = card.get_attribute("data-status") == "completed"
        if ended and page.evaluate("() => window.mgSnapshotChanges.length"):
            break
        assert time.monotonic() < deadline, (
            f"the job ended ({card.get_attribute('data-status')}) and the snapshot followed "
            f"({page.evaluate('() => window.mgSnapshotChanges.length')} changes) in time"
        )
    page.keyboard.type(" at dusk", delay=70)
    text += " at dusk"

    changes = page.evaluate("() => window.mgSnapshotChanges")
    during = [focused for focused, length in changes if length < len(text)]
    assert during, f"the snapshot changed while the user typed: {changes}"
    assert all(focused for focused, _ in changes), "the prompt kept the focus through each"
    assert field.evaluate("(el) => el === document.activeElement")
    assert field.evaluate("(el) => [el.value, el.selectionStart, el.selectionEnd]") == [
        text,
        len(text),
        len(text),
    ]
    assert view.evaluate("(el) => el.isConnected"), "the studio's view was not rendered again"
    assert field.evaluate("(el) => el.isConnected")
    now = studio.locator(".mg-studio").first.element_handle()
    assert view.evaluate("(el, now) => el === now", now)
    expect(snapshot).to_be_hidden()

    # the saved notebook has the job, its charge and the balance the meter shows
    generation_id = card.locator("code").inner_text()
    expect(snapshot).to_contain_text(generation_id)
    balance = studio.locator(".mg-meter-balance").inner_text().removesuffix(" available")
    saved = journey.save()["cells"][0]["outputs"]
    widget_output, snapshot_output = saved
    assert "text/html" not in widget_output["data"]
    html, line = ("".join(snapshot_output["data"][kind]) for kind in ("text/html", "text/plain"))
    assert generation_id in html
    assert line.endswith(f"balance {balance} credits")


@contextlib.contextmanager
def dark_theme(page):
    def switch(theme: str, light: str) -> None:
        page.evaluate(
            "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
            theme,
        )
        page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")

    switch("JupyterLab Dark", "false")
    try:
        yield
    finally:
        switch("JupyterLab Light", "true")


def reload(lab, notebook) -> None:
    """Load the page again (as the browser's reload does) with this notebook open."""
    server = lab.server
    lab.page.goto(f"{server.url}/lab/tree/{notebook.name}?token={server.token}&reset")
    lab.page.wait_for_function("window.jupyterapp && window.jupyterapp.started", timeout=60_000)
    lab.page.wait_for_function(
        "(path) => findPanel(path)?.sessionContext?.session?.kernel", arg=notebook.name
    )
    notebook.wait_idle()

"""``mediagen.studio()`` in real JupyterLab 4 and Chromium, against the real sandbox.

The kernel gets the sandbox's URL and key from its environment (``lab_env``): the notebooks
never contain the key. Each test's notebook has its own client cache (and journal).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
from pathlib import Path

from lab_harness import until_still
from playwright.sync_api import expect

DOCS_SCREENSHOT = Path(__file__).parents[2] / "docs" / "studio.png"
JOB_TIMEOUT = 60_000
# the estimate is not yet the service's (one class among others: to_have_class("mg-stale")
# would compare the whole class attribute)
STALE = re.compile(r"\bmg-stale\b")


def studio_cell(cache: Path) -> str:
    return (
        "import mediagen\n"
        f"client = mediagen.Client(cache_dir={str(cache)!r})\n"
        "studio = mediagen.studio(client, poll_interval=0.1, poll_cap=0.5, debounce=0.1)\n"
        "studio"
    )


def kernel_json(notebook, expression: str):
    """Run a new cell printing ``json.dumps(expression)`` and return the parsed value."""
    index = notebook.append_cell(f"import json; print(json.dumps({expression}))")
    notebook.run_cell(index)
    notebook.wait_cell_done(index)
    return json.loads(notebook.output(index).inner_text())


def pick(studio, kind_label: str, model_id: str) -> None:
    picker = studio.locator(".mg-picker")
    picker.get_by_role("radio", name=kind_label).click()
    option = picker.locator(f'[role=option][data-model="{model_id}"]')
    option.click()
    expect(option).to_have_attribute("aria-selected", "true")


def submit_when_priced(studio, *, billed: str | None = None) -> None:
    """Wait for the estimate (optionally for a billed duration), then click Submit once."""
    estimate = studio.locator(".mg-estimate")
    expect(estimate.locator(".mg-estimate-price")).to_contain_text("credits")
    if billed is not None:
        expect(estimate.locator(".mg-estimate-figures")).to_contain_text(f"Billed duration{billed}")
    expect(estimate.locator(".mg-estimate-figures")).not_to_have_class(STALE)
    button = estimate.get_by_role("button", name="Submit")
    expect(button).to_be_enabled()
    jobs = studio.locator(".mg-job")
    before = jobs.count()
    button.click()
    # A busy kernel may take the typing in after the page showed the last price: the click is
    # then not sent, and the page says so. Do what it asks, once: see the new price, click.
    changed = studio.get_by_text("Not sent: the form changed as you clicked")
    handled = jobs.nth(before).or_(estimate.get_by_role("alert")).first  # sent, or refused
    try:
        expect(handled).to_be_visible(timeout=15_000)
    except AssertionError:
        # Nothing at all: the click never reached the button (it happened once in a loaded CI
        # run, cause not found). The view ignores a click while one is in flight, so a second
        # click cannot submit twice.
        button.click()
        expect(handled).to_be_visible(timeout=JOB_TIMEOUT)
    if changed.is_visible():
        expect(estimate.locator(".mg-estimate-figures")).not_to_have_class(STALE)
        expect(button).to_be_enabled()
        button.click()


def wait_loaded(element) -> None:
    element.evaluate(
        """(el) => el.readyState >= 1 || new Promise((resolve, reject) => {
               el.addEventListener('loadedmetadata', resolve, {once: true});
               el.addEventListener('error', () => reject(new Error('media error')), {once: true});
           })"""
    )


def plays(element) -> bool:
    """play(), then wait until currentTime has advanced."""
    return element.evaluate(
        """async (el) => {
               el.muted = true;
               await el.play();
               const start = performance.now();
               while (el.currentTime <= 0.05 && performance.now() - start < 10000) {
                   await new Promise((r) => setTimeout(r, 50));
               }
               el.pause();
               return el.currentTime > 0.05;
           }"""
    )


def take_screenshot(page, top, bottom, path: Path) -> None:
    """The studio from its top to the bottom of ``bottom`` (a tall viewport, then back)."""
    size = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": 1900})
    try:
        top.evaluate("(el) => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)  # let JupyterLab lay out the taller window
        first, last = top.bounding_box(), bottom.bounding_box()
        height = last["y"] + last["height"] - first["y"] + 8
        clip = {"x": first["x"], "y": first["y"], "width": first["width"], "height": height}
        page.screenshot(path=str(path), clip=clip)
    finally:
        page.set_viewport_size(size)


CARDS = (
    "[{'model': c.generation['model'], 'mode': c.generation['mode'],"
    " 'status': c.generation['status'], 'request': c.request, 'items': c.items,"
    " 'outputs': [{'width': o.width, 'height': o.height, 'seconds': o.duration_seconds}"
    " for o in c.result.outputs]} for c in studio.cards]"
)


def test_studio_makes_an_image_audio_and_a_chained_video_that_play(lab, tmp_path):
    notebook = lab.open("studio.ipynb", [studio_cell(tmp_path / "cache")])
    notebook.run_all()
    page = lab.page
    studio = notebook.output(0)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    jobs = studio.locator(".mg-job")

    # an image: the <img> has the size the service reports
    pick(studio, "Image", "pixel-1")
    expect(studio.locator(".mg-form .mg-title")).to_have_text("Request · Pixel 1")
    submit_when_priced(studio)
    expect(jobs).to_have_count(1)
    image_card = jobs.filter(has_text="pixel-1")
    expect(image_card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    image = image_card.locator("img")
    image.wait_for()
    image.evaluate(
        "(el) => (el.complete && el.naturalWidth)"
        " || new Promise((r) => el.addEventListener('load', r, {once: true}))"
    )
    natural = image.evaluate("(el) => [el.naturalWidth, el.naturalHeight]")
    assert image.evaluate("(el) => el.src").startswith("blob:")

    # audio (speech): an <audio controls> that plays
    pick(studio, "Audio", "voxa-tts")
    submit_when_priced(studio)
    expect(jobs).to_have_count(2)
    audio_card = jobs.filter(has_text="voxa-tts")
    expect(audio_card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    audio = audio_card.locator("audio")
    audio.wait_for()
    assert audio.get_attribute("controls") is not None
    wait_loaded(audio)
    audio_seconds = audio.evaluate("(el) => el.duration")
    assert plays(audio)

    # a video from the image: pick the model, switch mode, "use as reference", 10 s
    pick(studio, "Video", "vidra-2")
    form = studio.locator(".mg-form")
    form.get_by_role("combobox", name="Mode").select_option(value="image_to_video")
    first_frame = form.locator("[data-field=first_frame] select")
    first_frame.wait_for()
    expect(first_frame).to_have_value("asset_example_image")  # the example's sample image
    use = image_card.get_by_role("button", name="Use output 1 as reference")
    until_still(use)  # the form's new fields and their estimate move the cards below
    use.click()
    expect(image_card.locator(".mg-job-notice")).to_have_text(
        "Output 1 is now a reference input. It fills First frame of Vidra 2."
    )
    expect(first_frame).to_have_value(re.compile(r"^asset_(?!example)"), timeout=10_000)
    form.get_by_role("combobox", name="Duration seconds", exact=True).select_option(label="10")
    submit_when_priced(studio, billed="10 s")
    expect(jobs).to_have_count(3)
    video_card = jobs.filter(has_text="vidra-2")
    expect(video_card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    video = video_card.locator("video")
    video.wait_for()
    assert video.get_attribute("controls") is not None
    wait_loaded(video)
    video_seconds = video.evaluate("(el) => el.duration")
    video_size = video.evaluate("(el) => [el.videoWidth, el.videoHeight]")
    assert plays(video)

    cards = kernel_json(notebook, CARDS)
    video_facts, audio_facts, image_facts = cards
    assert [c["model"] for c in cards] == ["vidra-2", "voxa-tts", "pixel-1"]
    assert all(c["status"] == "completed" for c in cards)
    assert natural == [image_facts["outputs"][0]["width"], image_facts["outputs"][0]["height"]]
    assert abs(audio_seconds - audio_facts["outputs"][0]["seconds"]) < 0.15
    assert video_facts["request"]["duration_seconds"] == 10
    assert abs(video_seconds - 10) < 0.2
    assert video_size == [video_facts["outputs"][0]["width"], video_facts["outputs"][0]["height"]]
    # chained: the video's first frame is the image output's asset
    assert video_facts["mode"] == "image_to_video"
    assert video_facts["request"]["first_frame"] == image_facts["items"][0]["asset_id"]

    # the gallery holds all three, in one widget (after the history it started with: the
    # browser tests share one tenant, so earlier tests' generations are there too)
    gallery = studio.locator(".mg-gallery")
    made = kernel_json(notebook, "[c.generation['id'] for c in studio.cards]")
    for generation_id in made:
        expect(gallery.locator(f'.mg-gallery-card[data-id="{generation_id}"]')).to_have_count(1)
    shown = gallery.locator(".mg-gallery-card").evaluate_all(
        "(cards) => cards.map((c) => c.dataset.id)"
    )
    assert shown[:3] == made, "newest first: this session's three lead the gallery"
    shot = tmp_path / "studio.png"
    take_screenshot(page, studio.locator(".mg-studio").first, video_card, shot)
    assert shot.read_bytes().startswith(b"\x89PNG")
    if os.environ.get("MEDIAGEN_UPDATE_SCREENSHOT"):  # refresh the README's picture on request
        DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SCREENSHOT)  # only now: every check above passed


def test_the_kernel_stays_responsive_while_a_job_is_pending(lab, lab_tenant, tmp_path):
    cache = tmp_path / "cache"
    notebook = lab.open("responsive.ipynb", [studio_cell(cache)])
    notebook.run_all()
    page = lab.page
    studio = notebook.output(0)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    pick(studio, "Image", "pixel-1")
    prompt = studio.locator(".mg-form").get_by_role("textbox", name="Prompt", exact=True)
    prompt.fill("A lighthouse at night [[slow:8]]")
    page.wait_for_timeout(500)  # the form debounces typing (200 ms) before telling the kernel
    submit_when_priced(studio)
    card = studio.locator(".mg-job").first
    # a busy machine may take seconds to show the card; the job stays pending for 8
    expect(card).to_have_attribute("data-status", "pending", timeout=8_000)
    expect(card.locator(".mg-job-prompt")).to_contain_text("[[slow:8]]")
    expect(card.locator(".mg-job-credits")).to_contain_text("reserved")

    index = notebook.append_cell("print('still responsive', 6 * 7)")
    notebook.run_cell(index)
    notebook.wait_cell_done(index, timeout=15_000)
    assert notebook.output(index).inner_text().strip() == "still responsive 42"
    assert card.get_attribute("data-status") == "pending", "the cell ran while the job waited"

    expect(card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    card.locator("img").wait_for()
    expect(card.locator(".mg-job-credits")).to_contain_text("charged")

    saved = notebook.save()
    text = json.dumps(saved)
    assert lab_tenant.api_key not in text
    state = saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert any(m["state"].get("_anywidget_id", "").endswith("JobCard") for m in state.values())
    assert all("buffers" not in m for m in state.values())
    outputs = list((cache / "outputs").iterdir())
    assert outputs
    for path in outputs:
        head = base64.b64encode(path.read_bytes()[:48]).decode()
        assert head not in text, f"{path.name} bytes were saved into the notebook"


def test_a_studio_given_an_async_client_shares_it_with_the_cells_that_await_it(lab, tmp_path):
    """A cell awaits an ``AsyncClient`` on the kernel's loop; JupyterLab 4.6 hands the studio's
    clicks to a kernel subshell, whose loop runs in another thread. The same client prices,
    submits and watches the job from the page, and the cells go on awaiting it after."""
    from test_journeys import assert_clean

    seen = len(lab.console)
    cells = [
        "import mediagen\n"
        f"client = mediagen.AsyncClient(cache_dir={str(tmp_path / 'cache')!r})\n"
        "before = (await client.credits.get()).balance",
        "studio = mediagen.studio(client, poll_interval=0.1, poll_cap=0.5, debounce=0.1)\nstudio",
    ]
    notebook = lab.open("async-client.ipynb", cells)
    notebook.run_all()
    studio = notebook.output(1)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    pick(studio, "Image", "pixel-1")
    prompt = studio.locator(".mg-form").get_by_role("textbox", name="Prompt", exact=True)
    prompt.fill("A lighthouse at night")
    lab.page.wait_for_timeout(500)  # the form debounces typing before telling the kernel
    submit_when_priced(studio)
    card = studio.locator(".mg-job").first
    expect(card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    card.locator("img").wait_for()
    spent = kernel_json(
        notebook,
        "[before - (await client.credits.get()).balance,"
        " studio.cards[0].generation['credits_charged']]",
    )
    assert spent[0] == spent[1] > 0
    # the gallery lists the key's history, which holds the jobs other tests had refused
    assert_clean(notebook, allowed_banners=("safety:",))
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"


def test_the_studio_lays_the_picker_beside_the_form_and_stacks_them_when_narrow(lab, tmp_path):
    """One CSS grid: two columns in a wide notebook, one column when the output is narrow."""
    notebook = lab.open("layout.ipynb", [studio_cell(tmp_path / "cache")])
    notebook.run_all()
    studio = notebook.output(0)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    pick(studio, "Image", "pixel-1")
    parts = {
        name: studio.locator(f".mg-studio-{name}").first for name in ("picker", "form", "estimate")
    }

    def boxes() -> dict[str, dict[str, float]]:
        found = {name: part.bounding_box() for name, part in parts.items()}
        assert all(found.values()), f"every part on screen: {found}"
        return found  # type: ignore[return-value]

    wide = boxes()
    assert wide["picker"]["x"] + wide["picker"]["width"] <= wide["form"]["x"], wide
    # the meter comes after the first paint into a row kept for it: its arrival moves nothing
    room = studio.locator(".mg-studio").first.evaluate(
        "(el) => parseFloat(getComputedStyle(el).getPropertyValue('--mg-studio-meter-height'))"
    )
    meter = studio.locator(".mg-studio-meter").first.bounding_box()
    assert meter is not None
    assert 0 < meter["height"] <= room, (meter, room)
    assert abs(wide["picker"]["y"] - wide["form"]["y"]) < 2, "side by side, tops aligned"
    assert wide["form"]["y"] + wide["form"]["height"] <= wide["estimate"]["y"], wide
    assert abs(wide["form"]["x"] - wide["estimate"]["x"]) < 2, "the estimate under the form"

    size = lab.page.viewport_size
    lab.page.set_viewport_size({"width": 560, "height": size["height"]})
    try:
        expect(parts["picker"]).to_be_visible()
        lab.page.wait_for_function(
            """([picker, form]) => picker.getBoundingClientRect().bottom
                   <= form.getBoundingClientRect().top""",
            arg=[parts["picker"].element_handle(), parts["form"].element_handle()],
        )
        narrow = boxes()
        assert abs(narrow["picker"]["x"] - narrow["form"]["x"]) < 2, "one column"
        assert narrow["form"]["width"] <= 560
    finally:
        lab.page.set_viewport_size(size)

    # the shared stylesheet is in the page once: not a copy per widget class (anywidget's _css)
    sheets = lab.page.evaluate(
        """() => [...document.querySelectorAll('style')]
            .filter((s) => s.textContent.includes('.mg-studio-jobs')).map((s) => s.id)"""
    )
    assert sheets == ["mediagen-shared-css"], sheets


# Every Blob the page makes a URL of, from here on: anywidget imports each widget's ``_esm``
# from one.
COUNT_BLOBS = """() => {
    window.__mgBlobs = [];
    const made = URL.createObjectURL;
    URL.createObjectURL = (blob) => {
        window.__mgBlobs.push(blob);
        return made.call(URL, blob);
    };
}"""
BLOB_TEXTS = "() => Promise.all(window.__mgBlobs.map((b) => b.text()))"


def test_a_second_studio_takes_the_view_modules_the_page_has(lab, tmp_path):
    """Each widget's ``_esm`` imports its view's module once per page: a second studio (the
    cell run again, as every job card and progress bar is another widget) parses none of its
    views' modules again, and works as the first does."""
    from test_journeys import assert_clean

    from mediagen.widgets import _assets

    seen = len(lab.console)
    cell = studio_cell(tmp_path / "cache")
    notebook = lab.open("second-studio.ipynb", [cell, cell.replace("studio =", "again =")])
    lab.page.evaluate(COUNT_BLOBS)
    notebook.run_all()
    for index in (0, 1):
        studio = notebook.output(index)
        studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
        pick(studio, "Image", "pixel-1")
        prompt = studio.locator(".mg-form").get_by_role("textbox", name="Prompt", exact=True)
        expect(prompt).to_be_visible()
        price = studio.locator(".mg-estimate-price")
        expect(price).to_contain_text("credits", timeout=JOB_TIMEOUT)
    texts = lab.page.evaluate(BLOB_TEXTS)
    views = {_assets.bundled(name): name for name in ("studio.js", "picker.js", "form.js")}
    imported = [views[text] for text in texts if text in views]
    loaders = [text for text in texts if text.startswith("const modules = globalThis")]
    assert sorted(set(imported)) == sorted(imported), f"a view imported twice: {imported}"
    assert len(loaders) >= 6, "two studios, each a studio, a picker and a form at least"
    keys = lab.page.evaluate("() => [...globalThis.__mediagenModules.keys()]")
    for name in views.values():
        assert sum(key.startswith(f"{name}:") for key in keys) == 1, keys
    assert_clean(notebook)
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"

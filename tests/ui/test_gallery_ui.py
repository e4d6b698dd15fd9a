"""The gallery in real JupyterLab and Chromium: audio plays from its card, images enlarge,
cards show what set their price, a click selects a generation back into Python, and it reads
well in the dark theme.

Also takes the README's pictures of the gallery (with audio) and of the dark theme, when
``MEDIAGEN_UPDATE_SCREENSHOT`` is set and every check passed.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from lab_harness import click_through_redraw
from playwright.sync_api import expect
from test_studio import (
    JOB_TIMEOUT,
    kernel_json,
    pick,
    plays,
    studio_cell,
    submit_when_priced,
    take_screenshot,
    wait_loaded,
)

DOCS = Path(__file__).parents[2] / "docs"


def make_history(cache: Path) -> str:
    """A cell that makes two kites (low, then high quality), a speech and a music file,
    journaled in ``cache`` (the studio's cache: as after a kernel restart); ``made`` holds
    their ids in that order. The browser tests share one tenant, so the gallery may also hold
    other tests' generations: checks look cards up by these ids."""
    return (
        "import mediagen\n"
        f"maker = mediagen.Client(cache_dir={str(cache)!r})\n"
        "made = [maker.images.create(model='pixel-pro', prompt='a red kite over the sea',"
        " quality=quality, size='1024x1024').wait().id for quality in ('low', 'high')]\n"
        "made.append(maker.audio.create(model='voxa-tts', text='Welcome to the gallery.',"
        " voice_name='Aria').wait().id)\n"
        "made.append(maker.audio.create(model='tunesmith', prompt='a calm piano loop',"
        " duration_seconds=5).wait().id)\n"
        "print('made')"
    )


def card_of(gallery, generation_id: str):
    return gallery.locator(f'.mg-gallery-card[data-id="{generation_id}"]')


def refresh_docs(shot: Path, name: str) -> None:
    if os.environ.get("MEDIAGEN_UPDATE_SCREENSHOT"):  # only after every check above passed
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS / name)


def set_theme(page, theme: str) -> None:
    page.evaluate(
        "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
    )
    page.wait_for_function(
        "(theme) => document.body.dataset.jpThemeName === theme", arg=theme, timeout=20_000
    )


def test_gallery_plays_audio_enlarges_images_and_selects_back_into_python(lab, tmp_path):
    cache = tmp_path / "cache"
    notebook = lab.open("gallery.ipynb", [make_history(cache), studio_cell(cache)])
    notebook.run_all()
    page = lab.page
    notebook.wait_cell_done(1, timeout=JOB_TIMEOUT)
    studio = notebook.output(1)
    gallery = studio.locator(".mg-gallery")
    cards = gallery.locator(".mg-gallery-card")
    low, high, speech_id, music_id = kernel_json(notebook, "made")
    for generation_id in (low, high, speech_id, music_id):  # filled from the history on start
        expect(card_of(gallery, generation_id)).to_have_count(1, timeout=JOB_TIMEOUT)
    before = cards.count()

    # audio: a real, wide player that plays
    speech = card_of(gallery, speech_id)
    audio = speech.locator("audio")
    audio.wait_for()
    assert audio.evaluate("(el) => el.getBoundingClientRect().width") >= 120
    wait_loaded(audio)
    assert plays(audio)
    expect(card_of(gallery, music_id).locator("audio")).to_have_count(1)

    # the two kites differ only in quality, and the cards say so
    expect(card_of(gallery, low).locator(".mg-gallery-settings")).to_have_text(
        "quality low · size 1024x1024"
    )
    expect(card_of(gallery, high).locator(".mg-gallery-settings")).to_have_text(
        "quality high · size 1024x1024"
    )

    # an image enlarges in a dialog at full size, and Escape closes it
    card_of(gallery, high).get_by_role("button", name="Enlarge").click()
    dialog = gallery.locator("dialog.mg-lightbox")
    expect(dialog).to_be_visible()
    big = dialog.locator("img")
    big.evaluate(
        "(el) => (el.complete && el.naturalWidth)"
        " || new Promise((r) => el.addEventListener('load', r, {once: true}))"
    )
    assert big.evaluate("(el) => el.naturalWidth") == 1024
    assert big.evaluate("(el) => el.getBoundingClientRect().width") > 300
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()

    # a click selects a generation, back in Python, even when the kernel redraws the gallery
    # between the press and the release (here: Python selects another card meanwhile)
    select = speech.get_by_role("button", name="Select generation")
    music_select = card_of(gallery, music_id).get_by_role("button", name="Select generation")

    def python_selects_the_music() -> None:
        notebook.run_in_kernel(f"studio.gallery.selected_id = {music_id!r}")
        expect(music_select).to_have_attribute("aria-pressed", "true")

    click_through_redraw(page, select, python_selects_the_music)
    expect(select).to_have_attribute("aria-pressed", "true")
    expect(music_select).to_have_attribute("aria-pressed", "false")
    selected = kernel_json(
        notebook,
        "[studio.gallery.selected.model, studio.gallery.selected.id,"
        " [g.model for g in studio.generations]]",
    )
    assert selected[0] == "voxa-tts"
    assert selected[1] == speech_id
    assert len(selected[2]) == before
    assert sorted(selected[2][:4]) == ["pixel-pro", "pixel-pro", "tunesmith", "voxa-tts"]

    shot = tmp_path / "gallery.png"
    take_screenshot(page, gallery, gallery, shot)
    refresh_docs(shot, "gallery.png")

    # the dark theme: the studio follows JupyterLab's colours
    pick(studio, "Image", "pixel-pro")
    set_theme(page, "JupyterLab Dark")
    try:
        background = studio.locator(".mg-gallery").evaluate(
            "(el) => getComputedStyle(el).backgroundColor"
        )
        channels = [int(c) for c in background[background.index("(") + 1 : -1].split(",")[:3]]
        assert max(channels) < 100, f"the gallery stayed light in the dark theme: {background}"
        dark = tmp_path / "studio-dark.png"
        take_screenshot(page, studio.locator(".mg-studio").first, gallery, dark)
        refresh_docs(dark, "studio-dark.png")
    finally:
        set_theme(page, "JupyterLab Light")

    # a pending job says how long this model usually takes here (two kites are history)
    prompt = studio.locator(".mg-form").get_by_role("textbox", name="Prompt", exact=True)
    prompt.fill("a slow kite [[slow:3]]")
    page.wait_for_timeout(500)  # the form debounces typing before telling the kernel
    submit_when_priced(studio)
    card = studio.locator(".mg-job").first
    expect(card).to_have_attribute("data-status", "pending")
    expect(card.locator(".mg-job-elapsed")).to_contain_text("usually ~")
    expect(card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    expect(card.locator(".mg-job-elapsed")).not_to_contain_text("usually")
    expect(cards).to_have_count(before + 1)

    errors = [line for line in lab.console if line.startswith("error")]
    assert errors == []


CORNER_PIXEL = """(img) => {
    if (!img.complete || !img.naturalWidth) return null;
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const context = canvas.getContext('2d');
    context.drawImage(img, 0, 0);
    return Array.from(context.getImageData(2, 2, 1, 1).data.slice(0, 3));
}"""


def test_a_reopened_notebook_shows_the_studio_snapshot_not_model_not_found(lab, tmp_path):
    cache = tmp_path / "cache"
    shown = (
        "import mediagen\n"
        f"client = mediagen.Client(cache_dir={str(cache)!r})\n"
        "studio = mediagen.studio(client)\n"
        "await studio.ready  # the gallery has the history now\n"
        "studio"
    )
    notebook = lab.open("reopen.ipynb", [make_history(cache), shown])
    notebook.run_all()
    notebook.wait_cell_done(1, timeout=JOB_TIMEOUT)
    made = kernel_json(notebook, "made")
    gallery = notebook.output(1).locator(".mg-gallery")
    for generation_id in made:
        expect(card_of(gallery, generation_id)).to_have_count(1, timeout=JOB_TIMEOUT)
    summary = kernel_json(notebook, "studio.snapshot_text()")
    assert summary.startswith("mediagen studio: ")
    expect(notebook.snapshot(1)).to_contain_text(summary)  # the snapshot has caught up
    notebook.save()
    lab.close_all()  # the kernel is gone: its widget models with it
    saved = json.loads(notebook.path.read_text())
    saved["metadata"].pop("widgets", None)  # as a notebook is published: no widget state
    notebook.path.write_text(json.dumps(saved))

    lab.page.evaluate(
        "(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", notebook.name
    )
    output = notebook.snapshot(1)  # no live view: the snapshot shows
    expect(output).to_be_visible(timeout=30_000)
    expect(output).to_contain_text(summary)
    expect(notebook.cell(1)).not_to_contain_text("model not found")
    for generation_id in made:  # the newest generations, so within the snapshot's limit
        expect(output).to_contain_text(generation_id)
    assert output.locator("img[src^='data:image/']").count() >= 2  # at least the two kites
    expect(output).to_contain_text("quality high · size 1024x1024")

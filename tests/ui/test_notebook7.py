"""Jupyter Notebook 7 (``pip install notebook``) in real Chromium: the studio, the media player
and the magics work there too, against the real sandbox.

Notebook 7 is built from JupyterLab's packages but is another application (its own shell, page
and URLs), so what works in JupyterLab is checked here again instead of assumed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from lab_harness import (
    FIND_PANEL,
    SNAPSHOT,
    LabServer,
    require_chromium,
    write_notebook,
)
from playwright.sync_api import expect
from test_studio import JOB_TIMEOUT, pick, plays, studio_cell, submit_when_priced, wait_loaded

pytest.importorskip("notebook", reason="Jupyter Notebook 7 is in the test extra (notebook>=7)")

NAME = "nb7.ipynb"


@pytest.fixture(scope="module")
def notebook7(tmp_path_factory, lab_env) -> Iterator[LabServer]:
    require_chromium()
    server = LabServer(
        tmp_path_factory.mktemp("nb7"), lab_env, app="notebook", app_class="JupyterNotebookApp"
    )
    yield server
    server.stop()


def test_studio_player_and_magics_work_in_notebook_7(notebook7, lab, tmp_path):
    cache = tmp_path / "cache"
    cells = [
        "%load_ext mediagen",
        studio_cell(cache),
        "%%mediagen audio --model voxa-tts --voice_name Aria -o hello --yes\n"
        "Hello from Notebook 7.",
        "from mediagen.widgets import MediaPlayer\nMediaPlayer.from_output(hello.outputs[0])",
    ]
    write_notebook(notebook7.root / NAME, cells)
    console: list[str] = []
    # the session's browser (Playwright's sync API runs one instance), a context of its own
    context = lab.page.context.browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.add_init_script(FIND_PANEL)
        page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
        page.goto(f"{notebook7.url}/notebooks/{NAME}?token={notebook7.token}")
        page.wait_for_function(
            """(path) => {
                const kernel = window.jupyterapp && findPanel(path)
                    ?.sessionContext?.session?.kernel;
                return kernel && kernel.status === 'idle';
            }""",
            arg=NAME,
            timeout=60_000,
        )
        assert page.evaluate("document.body.dataset.notebook") == "notebooks"
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        cell = page.locator(".jp-Notebook .jp-Cell")

        # the studio: pick, price, submit, and the image shows
        studio = cell.nth(1).locator(".jp-OutputArea-output")
        studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
        pick(studio, "Image", "pixel-1")
        submit_when_priced(studio)
        card = studio.locator(".mg-job").first
        expect(card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
        # the snapshot beside it: hidden while the studio is live, and already holding the job
        snapshot = cell.nth(1).locator(f".jp-OutputArea-output:has(> {SNAPSHOT})")
        expect(snapshot).to_have_count(1)
        expect(snapshot).to_be_hidden()
        expect(snapshot).to_contain_text(card.locator("code").inner_text())
        image = card.locator("img")
        image.wait_for()
        assert image.evaluate(
            "(el) => (el.complete && el.naturalWidth)"
            " || new Promise((r) => el.addEventListener('load', () => r(el.naturalWidth)))"
        )

        # the magic: estimate, then the generation with a playable audio element
        magic = cell.nth(2).locator(".jp-OutputArea-output")
        expect(magic.filter(has_text="Estimate for voxa-tts").first).to_be_visible(
            timeout=JOB_TIMEOUT
        )
        spoken = magic.locator("audio").first
        spoken.wait_for(timeout=JOB_TIMEOUT)
        wait_loaded(spoken)
        assert plays(spoken)

        # the player widget
        player = cell.nth(3).locator(".jp-OutputArea-output audio")
        player.wait_for(timeout=JOB_TIMEOUT)
        assert player.evaluate("(el) => el.src").startswith("blob:")
        wait_loaded(player)
        assert plays(player)
    finally:
        with contextlib.suppress(Exception):
            page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        context.close()
    errors = [line for line in console if line.startswith("error")]
    assert errors == []

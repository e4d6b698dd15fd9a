"""A saved notebook shows what the user saw: the widgets' snapshots follow them, in a real kernel.

The studio runs in an IPython kernel (nbclient, as ``nbconvert --execute`` does) against the
sandbox; the notebook is then saved and exported by nbconvert's HTMLExporter, and the HTML, read
without JavaScript, must show the generations made after the studio was displayed, their
charges and the balance. A second kernel counts the ``update_display_data`` messages: one per
burst of changes, none when what the snapshot shows did not change.
"""

from __future__ import annotations

import os
import textwrap

import bs4
import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient
from nbconvert import HTMLExporter

import mediagen
from mediagen.widgets._live_snapshot import UPDATE_DELAY_S

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SNAPSHOT = ".mediagen-live-snapshot"

STUDIO_CELL = """\
import asyncio, time
import mediagen

async def until(check, timeout=60):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)

client = mediagen.Client()
studio = mediagen.studio(client, poll_interval=0.05, poll_cap=0.2, debounce=0.02)
studio
"""

# The studio's own submit path (the Submit button's), three prompts, each to its end.
JOURNEY_CELL = """\
await studio.ready
studio.picker.value = "pixel-1"
for prompt in ["a red kite", "a lighthouse at dusk", "a fox in snow"]:
    await until(lambda: studio.form.chosen_model == "pixel-1")
    studio.form.values = {**studio.form.values, "prompt": prompt}
    await until(lambda: studio.estimate.status == "ready"
                and studio.form.request.get("prompt") == prompt
                and not studio.estimate.blocked_reason and not studio.estimate.submitting)
    made = len(studio.cards)
    studio.estimate.submit()
    await until(lambda: len(studio.cards) == made + 1)
    await studio.cards[0].task
balance = client.credits.get().balance
await until(lambda: studio.meter.credits.get("balance") == balance
            and len(studio.gallery.generations) == 3)
await asyncio.sleep(4 * UPDATE_DELAY_S)
"""


def visible_text(html: str) -> tuple[bs4.BeautifulSoup, str]:
    """The page as a reader without JavaScript sees it: no scripts, no style sheets."""
    soup = bs4.BeautifulSoup(html, "html.parser")
    for hidden in soup(["script", "style"]):
        hidden.decompose()
    return soup, soup.get_text(" ", strip=True)


@pytest.fixture
def kernel_env(sandbox, tenant, tmp_path) -> dict[str, str]:
    return {
        **os.environ,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_API_KEY": tenant.api_key,
        "MEDIAGEN_CACHE_DIR": str(tmp_path / "kernel-cache"),
    }


def test_saved_studio_shows_its_jobs_charges_and_balance_in_nbconvert_html(
    sandbox, tenant, kernel_env, tmp_path
):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [
        nbformat.v4.new_code_cell(STUDIO_CELL),
        nbformat.v4.new_code_cell(f"UPDATE_DELAY_S = {UPDATE_DELAY_S}\n" + JOURNEY_CELL),
    ]
    NotebookClient(notebook, timeout=180, resources={"metadata": {"path": str(tmp_path)}}).execute(
        env=kernel_env
    )
    saved = tmp_path / "studio.ipynb"
    nbformat.write(notebook, saved)

    with mediagen.Client(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path / "check"
    ) as client:
        made = list(client.generations.list(limit=10))
        balance = client.credits.get().balance
    assert len(made) == 3
    assert all(g.status == "completed" for g in made)

    # the widget's output is the view, with no text of its own to show where no widget runs;
    # the snapshot is an output of its own
    widget_output, snapshot_output = nbformat.read(saved, as_version=4).cells[0].outputs
    assert set(widget_output["data"]) == {WIDGET_VIEW, "text/plain"}
    assert widget_output["data"]["text/plain"] == ""
    assert snapshot_output["data"]["text/plain"] == (
        f"mediagen studio: 3 generations, balance {balance:,g} credits"
    )

    with_state = nbformat.read(saved, as_version=4)
    assert with_state.metadata.get("widgets"), "nbclient saved the widget state"
    without_state = nbformat.read(saved, as_version=4)
    del without_state.metadata["widgets"]
    for exported in (with_state, without_state):
        page, _ = HTMLExporter().from_notebook_node(exported)
        soup, text = visible_text(page)
        [snapshot] = soup.select(SNAPSHOT)
        assert f"mediagen studio: 3 generations, balance {balance:,g} credits" in text
        assert "widget" not in text.lower(), "no stray line naming the widget"
        cards = {
            card.code.get_text(): card.get_text(" ")
            for card in snapshot.select("div.mediagen-card")
        }
        assert set(cards) == {g.id for g in made}, "the three generations, by id"
        for generation in made:
            assert "completed" in cards[generation.id]
            assert f"{generation.credits_charged:g} cr" in cards[generation.id]
        assert len(snapshot.select('img[src^="data:image/"]')) == 3, "their thumbnails"


KERNEL_SETUP = """\
import asyncio
from IPython.display import display
from mediagen.widgets import Gallery
from mediagen.widgets._live_snapshot import UPDATE_DELAY_S

def made(n):
    return {"id": f"gen_{n}", "type": "image", "model": "pixel-1", "status": "completed",
            "prompt": f"prompt {n}", "created_at": f"2026-11-20T10:00:{n:02d}Z",
            "credits_charged": 1.0, "outputs": []}

gallery = Gallery()
"""


class Kernel:
    """One IPython kernel; :meth:`run` returns the iopub messages of a cell's execution."""

    def __init__(self, env: dict[str, str]) -> None:
        self.manager, self.client = start_new_kernel(kernel_name="python3", env=env)

    def run(self, code: str) -> list[dict]:
        messages: list[dict] = []
        reply = self.client.execute_interactive(
            textwrap.dedent(code), output_hook=messages.append, timeout=60
        )
        assert reply["content"]["status"] == "ok", reply["content"]
        return messages

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def of_type(messages: list[dict], kind: str) -> list[dict]:
    return [m["content"] for m in messages if m["msg_type"] == kind]


def test_updates_follow_changes_coalesced_and_only_when_the_snapshot_changes(tmp_path):
    kernel = Kernel({**os.environ, "MEDIAGEN_CACHE_DIR": str(tmp_path / "cache")})
    try:
        kernel.run(KERNEL_SETUP)
        wait = f"await asyncio.sleep({4 * UPDATE_DELAY_S})"

        shown = of_type(kernel.run(f"display(gallery)\n{wait}"), "display_data")
        assert [sorted(d["data"]) for d in shown] == [
            [WIDGET_VIEW, "text/plain"],
            ["text/html", "text/plain"],
        ], "the widget view, then the snapshot in an output of its own"
        display_id = shown[1]["transient"]["display_id"]
        assert shown[1]["data"]["text/plain"] == "Gallery: 0 generations"

        # a burst of changes: one update, with the state at its end
        burst = kernel.run(f"for n in range(5): gallery.add(made(n))\n{wait}")
        [update] = of_type(burst, "update_display_data")
        assert update["transient"]["display_id"] == display_id
        assert update["data"]["text/plain"] == "Gallery: 5 generations"
        assert all(f"gen_{n}" in update["data"]["text/html"] for n in range(5))
        assert not of_type(burst, "display_data"), "an update adds no output to the cell"

        # changes the snapshot does not show (a filter, a selection, the same card again)
        quiet = kernel.run(
            f"gallery.query = 'prompt 3'\ngallery.selected_id = 'gen_3'\n"
            f"gallery.add(made(3))\n{wait}"
        )
        assert of_type(quiet, "update_display_data") == []

        # two changes further apart than the delay: two updates
        apart = kernel.run(f"gallery.add(made(5))\n{wait}\ngallery.add(made(6))\n{wait}")
        texts = [u["data"]["text/plain"] for u in of_type(apart, "update_display_data")]
        assert texts == ["Gallery: 6 generations", "Gallery: 7 generations"]

        # nothing follows a closed widget
        closed = kernel.run(f"gallery.close()\ngallery.add(made(7))\n{wait}")
        assert of_type(closed, "update_display_data") == []
    finally:
        kernel.close()

"""With the extension loaded, the plain client's long operations show progress (text here: the
test shell has no widget front end); unloaded, they are silent again."""

from __future__ import annotations

from mediagen.client import _hooks

SETUP = """
import mediagen
client = mediagen.Client(cache_dir=CACHE)
gen = client.images.create(model="pixel-1", prompt="slow lighthouse [[slow:1]]")
"""


def test_wait_history_and_batch_show_progress_while_loaded(shell, tmp_path):
    assert shell.run(f"CACHE = {str(tmp_path)!r}\n" + SETUP).success
    run = shell.run("done = client.generations.wait(gen, poll_interval=0.2)")
    assert run.success, run.text
    gen = shell.ns["done"]
    assert gen.status == "completed"
    assert f"Waiting for generation {gen.id}" in run.stderr
    assert "completed · pixel-1" in run.stderr

    run = shell.run("frame = client.generations.to_dataframe()")
    assert run.success, run.text
    assert "Fetching history: 1 page" in run.stderr
    assert "1 generation" in run.stderr
    assert "1 generations" not in run.stderr
    assert len(shell.ns["frame"]) == 1

    requests = '[{"model": "pixel-1", "prompt": "a"}, {"model": "pixel-1", "prompt": "b"}]'
    run = shell.run(f"batch = client.submit_batch({requests})")
    assert run.success, run.text
    assert "Submitting 2 requests: 2/2 requests" in run.stderr

    # a callback of the caller's own replaces the display
    run = shell.run(
        "seen = []\n"
        "client.generations.wait(batch.generations[0], progress=seen.append, poll_interval=0.1)"
    )
    assert run.success, run.text
    assert "Waiting for generation" not in run.stderr
    assert shell.ns["seen"]


def test_unloading_removes_the_reporter(shell):
    assert _hooks._reporter is not None
    shell.ip.run_line_magic("unload_ext", "mediagen.extension")
    try:
        assert _hooks._reporter is None
        with _hooks.progress("anything") as bar:
            assert bar is None
    finally:
        shell.ip.run_line_magic("load_ext", "mediagen.extension")

"""The blocking resources are written from the asyncio ones (``scripts/unasync.py``): what
is committed is what the source makes, and an edit of the source reaches the blocking twin."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "unasync.py"


def _script():
    spec = importlib.util.spec_from_file_location("unasync", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_blocking_resources_are_what_the_asyncio_ones_make():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_an_edit_of_an_asyncio_method_reaches_its_blocking_twin():
    unasync = _script()
    path = unasync.TARGETS[0]
    text = path.read_text()
    said = '"""One quote per request (for showing a batch\'s total before submitting it);'
    assert text.count(said) == 2  # the source's and its twin's
    edited = text.replace(said, said.replace("One quote", "Exactly one quote"), 1)
    out = unasync.generated(edited, path)
    assert out.count("Exactly one quote per request") == 2
    twin = out[out.index(unasync.OUTPUT_MARK) :]
    assert "async def" not in twin
    assert "await " not in twin
    assert "class Generations(_GenerationsBase, Generic[BlockingT]):" in twin
    assert "def __iter__(self) -> Iterator[Generation[BlockingT]]:" in twin

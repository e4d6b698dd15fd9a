"""The documentation site builds with warnings as errors (``scripts/build-docs``), and its
API reference has every public name.

``sphinx-build -W --keep-going -n`` fails on a broken cross-reference, a name in a signature it
cannot resolve, a page outside every table of contents, a docstring that is not valid
reStructuredText, and (MyST-NB's ``nb_execution_raise_on_error``) on a guide cell that raises
when run against the sandbox the build starts. No link is checked online.

The tutorials show the outputs their notebooks store, which ``pytest --nbval`` holds to a fresh
run (a cell that raises fails it too); here, no tutorial shows a traceback but where a cell is
meant to raise.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.docs, pytest.mark.slow, pytest.mark.timeout(900)]


def _sandboxes_under(folder: Path) -> list[str]:
    """Running sandbox processes whose data lives under ``folder``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or ())
        if "mediagen_sandbox" in command and str(folder) in command:
            found.append(command)
    return found


def test_the_site_builds_without_a_warning(tmp_path):
    out = tmp_path / "html"
    temp = tmp_path / "tmp"  # the build's temporary files (its sandbox's data) go here
    temp.mkdir()
    done = subprocess.run(
        [ROOT / "scripts" / "build-docs", out],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=880,
        check=False,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    assert not _sandboxes_under(temp), "the build left a sandbox running"
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    for page in (
        "index.html",
        "getting-started.html",
        "guides/budgets.html",
        "tutorials/01_quickstart.html",
        "api/client.html",
        "sandbox.html",
        "architecture.html",
        "wire-contract.html",
        "widgets.html",
    ):
        assert page in pages
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for name in notebooks:
        html = (out / "tutorials" / f"{name}.html").read_text(encoding="utf-8")
        assert 'class="cell_output' in html, f"{name}: no outputs rendered"
        cells = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text("utf-8"))["cells"]
        raising = [
            index
            for index, cell in enumerate(cells)
            if any(output.get("output_type") == "error" for output in cell.get("outputs", ()))
            and "raises-exception" not in cell.get("metadata", {}).get("tags", ())
        ]
        assert not raising, f"{name}: a traceback in the cells {raising}"
    reference = "".join(p.read_text(encoding="utf-8") for p in (out / "api").glob("*.html"))
    for module_name in ("mediagen", "mediagen.widgets", "mediagen.datasets", "mediagen.history"):
        module = importlib.import_module(module_name)
        missing = [
            name
            for name in module.__all__
            if name != "__version__" and f'id="{module_name}.{name}"' not in reference
        ]
        assert not missing, f"not in the API reference: {module_name}.{missing}"
    quickstart = (out / "tutorials" / "01_quickstart.html").read_text(encoding="utf-8")
    assert "data:image/" in quickstart  # the media are in the page
    assert "Traceback" not in quickstart

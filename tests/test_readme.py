"""Every ```python block of README.md runs, as written, against the sandbox.

The blocks are one story (later ones use the ``client``, ``gen`` and ``grid`` of earlier ones),
so they run in order as the cells of one notebook, in a real IPython kernel: some need one
(top-level ``await``, widgets shown on the kernel's loop). The kernel gets a fresh tenant's
``MEDIAGEN_BASE_URL`` / ``MEDIAGEN_API_KEY``, a temporary home and cache, and a temporary working
directory holding the one file the README asks the reader to bring (``ref.png``). A block that
raises fails the test with its line in README.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from PIL import Image

README = Path(__file__).resolve().parents[1] / "README.md"
#: a real kernel runs the whole story: some 20 s
pytestmark = pytest.mark.slow


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line in the file, code) of each ```python fence, in order."""
    return [
        (token.map[0] + 2, token.content)
        for token in MarkdownIt().parse(text)
        if token.type == "fence" and token.info.strip() == "python" and token.map
    ]


def test_the_readme_has_python_blocks_to_run() -> None:
    lines = [line for line, _ in python_blocks(README.read_text(encoding="utf-8"))]
    assert len(lines) >= 6, lines


def test_the_readme_blocks_name_no_absolute_path() -> None:
    """Run as written, a block with ``"/somewhere"`` would write outside its working folder."""
    absolute = [
        (line + offset, text)
        for line, code in python_blocks(README.read_text(encoding="utf-8"))
        for offset, text in enumerate(code.splitlines())
        if re.search(r"""["'](/|~)""", text.split("#", 1)[0])
    ]
    assert not absolute, absolute


@pytest.mark.timeout(240)
def test_every_python_block_of_the_readme_runs(sandbox, tmp_path, monkeypatch) -> None:
    tenant = sandbox.new_tenant(balance=5000)
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "home").mkdir()
    Image.new("RGB", (320, 240), (40, 90, 160)).save(work / "ref.png")
    for name, value in {
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_API_KEY": tenant.api_key,
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("MEDIAGEN_CACHE_DIR", raising=False)

    blocks = python_blocks(README.read_text(encoding="utf-8"))
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(f"# README.md line {line}\n{code}") for line, code in blocks
    ]
    runner = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    try:
        runner.execute()
    except CellExecutionError as error:
        pytest.fail(f"a README block failed:\n{error}", pytrace=False)
    # what the blocks make lands in the working folder: they ran there, to their last line
    assert (work / "lighthouse.html").stat().st_size > 0
    assert list((work / "team-history").glob("member=ana/month=*/*.parquet"))
    outputs = [o for cell in notebook.cells for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = "".join(str(o) for o in outputs)
    assert tenant.api_key not in shown, "the key never appears in an output"

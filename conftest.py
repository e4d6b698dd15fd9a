"""The tutorial notebooks under nbval: one sandbox for the session, a fresh tenant per notebook.

nbval starts a kernel per notebook file when the file's first cell is set up; the hook below
runs just before that (``tryfirst``) and puts that notebook's own connection in the environment
the kernel inherits. See ``tests/notebooks_support/notebook_sandbox.py``. It sits at the
repository root so that ``notebooks/`` holds only what users open.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests" / "notebooks_support"))

from notebook_sandbox import NotebookSandbox

_state: dict[str, object] = {"sandbox": None, "current": None}


def _sandbox() -> NotebookSandbox:
    if _state["sandbox"] is None:
        _state["sandbox"] = NotebookSandbox().start()
    return _state["sandbox"]  # type: ignore[return-value]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    path = Path(str(item.fspath))
    if path.suffix != ".ipynb" or _state["current"] == path:
        return
    _state["current"] = path
    os.environ.update(_sandbox().env_for(path))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _state["sandbox"] is not None:
        _state["sandbox"].stop()  # type: ignore[attr-defined]
        _state["sandbox"] = None

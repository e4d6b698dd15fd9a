"""The tutorial notebooks under nbval: one sandbox for the session, a fresh tenant per notebook.

nbval starts a kernel per notebook file when the file's first cell is set up; the hook below
runs just before that (``tryfirst``) and puts that notebook's own connection in the environment
the kernel inherits. See ``tests/notebooks_support/notebook_sandbox.py``. It sits at the
repository root so that ``notebooks/`` holds only what users open.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests" / "notebooks_support"))

from notebook_sandbox import NotebookSandbox

_state: dict[str, object] = {"sandbox": None, "current": None}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: twice as many workers as cores. About a third of the suite's time is
    spent waiting (on JupyterLab and Chromium, a Spark JVM, a sandbox job's latency, a
    subprocess), time a core would otherwise leave idle: on two cores, three workers finish
    the suite in about four fifths of the time two take, and four sooner still."""
    return max(2, 2 * (os.cpu_count() or 1))


#: the test files that take longest, longest first (``python -m pytest --durations=0``, summed
#: per file): a worker keeps a file's tests together, so one of these started last would run on
#: alone while the other workers stand idle
SLOWEST_FIRST = (
    "tests/ui/test_lab_sidebar.py",
    "tests/datasets/test_cluster_rate.py",
    "tests/sandbox/test_sandbox_openapi.py",
    "tests/ui/test_journeys.py",
    "tests/ui/test_marimo.py",
    "tests/test_docs.py",
    "tests/datasets/test_spark.py",
    "tests/datasets/test_cluster_pace.py",
    "tests/lab_extension/test_labextension_source.py",
    "tests/client/test_shared_pace.py",
    "tests/release/test_wheel.py",
    "tests/ui/test_gallery_ui.py",
    "tests/ui/test_studio.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (the order the workers are handed files in), the rest as
    collected."""
    rank = {path: place for place, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_configure(config: pytest.Config) -> None:
    """Each test process (each xdist worker) keeps the keys' shared paces in a runtime
    directory of its own, which the kernels, servers and processes it starts inherit: a pace
    learned by one test (or by an earlier run, since a pace outlives its run) must not slow
    another test's key, and tests that share a made-up key run side by side."""
    import tempfile

    if "MEDIAGEN_RUNTIME_DIR" not in os.environ:
        made = _state["runtime"] = tempfile.mkdtemp(prefix="mediagen-runtime-")
        os.environ["MEDIAGEN_RUNTIME_DIR"] = made


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    made = _state.pop("runtime", None)
    if made is not None:
        shutil.rmtree(str(made), ignore_errors=True)


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
    notebook = item.parent
    if not isinstance(getattr(notebook, "get_kernel_message", None), FinalOutputs):
        notebook.get_kernel_message = FinalOutputs(notebook.get_kernel_message)  # type: ignore[union-attr]


class FinalOutputs:
    """A cell's iopub messages as the saved notebook shows them: an ``update_display_data``
    replaces the output with its display id, as nbclient does when the tutorials are recorded.

    nbval reads only the first version of such an output (a progress bar, later replaced by its
    summary line); without this, a cell with live progress could not be compared at all.
    """

    def __init__(self, get: Callable[..., dict[str, Any]]) -> None:
        self._get = get
        self._ready: deque[dict[str, Any]] = deque()

    def __call__(self, timeout: float | None = None, stream: str = "iopub") -> dict[str, Any]:
        if stream != "iopub":
            return self._get(timeout=timeout, stream=stream)
        if not self._ready:
            self._ready.extend(self._one_request(timeout))
        return self._ready.popleft()

    def _one_request(self, timeout: float | None) -> list[dict[str, Any]]:
        """Messages up to the kernel going idle (only requests change its state: no frontend)."""
        held: list[dict[str, Any]] = []
        while True:
            message = self._get(timeout=timeout, stream="iopub")
            content = message["content"]
            if message["msg_type"] == "update_display_data":
                shown = content.get("transient", {}).get("display_id")
                for earlier in held:
                    if earlier["content"].get("transient", {}).get("display_id") == shown:
                        earlier["content"]["data"] = content["data"]
                        earlier["content"]["metadata"] = content.get("metadata", {})
                continue
            held.append(message)
            if message["msg_type"] == "status" and content["execution_state"] == "idle":
                return held


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _state["sandbox"] is not None:
        _state["sandbox"].stop()  # type: ignore[attr-defined]
        _state["sandbox"] = None

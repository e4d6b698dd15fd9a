"""The real-browser harness's parts: Debian's Chromium and how it is started, an isolated
JupyterLab 4 server, and a page's notebooks. A module of its own, not the ``conftest`` of
``tests/ui``, so a test imports it by a name no other folder's ``conftest`` takes."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from mediagen.cli import _tether
from process_helpers import free_port

CHROMIUM = Path(os.environ.get("MEDIAGEN_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--autoplay-policy=no-user-gesture-required",
]
KERNEL_IDLE = "Python 3 (ipykernel) | Idle"
# A mediagen widget's snapshot: an output of its own beside the widget's (hidden while it lives)
SNAPSHOT = ".mediagen-live-snapshot"
# Installed in the page once; every snippet below finds its notebook panel by path.
FIND_PANEL = """window.findPanel = (path) => [...window.jupyterapp.shell.widgets('main')]
    .find((w) => w.context && w.context.path === path);"""


def require_chromium() -> None:
    if CHROMIUM.exists():
        return
    message = (
        f"browser tests need Debian's Chromium at {CHROMIUM}: "
        "install it with `scripts/setup-test-deps` (apt-get, as root or through sudo)"
    )
    if os.environ.get("CI"):
        pytest.fail(f"CI is set, so browser tests must run; {message}")
    pytest.skip(message)


def until_still(locator, quiet: float = 0.5, timeout: float = 10.0) -> None:
    """Until ``locator``'s box has not moved for ``quiet`` seconds: Playwright's own check
    before a click spans two animation frames, and a loaded machine may still lay out what
    was added above after that (a finished job's image, a cell's new output, a form's new
    fields and their estimate), so the click lands beside the button."""
    deadline = time.monotonic() + timeout
    box, since = locator.bounding_box(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = locator.bounding_box()
        if now != box:
            box, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


def click_through_redraw(page, target, redraw: Callable[[], object]) -> None:
    """Press the middle of ``target``, run ``redraw`` (which makes the kernel redraw what holds
    it, and waits until the page shows the redraw), check ``target`` is still under the
    pointer, then release: a click a redraw interrupts must still count (a browser drops the
    click of an element that left the page between the press and the release)."""
    box = target.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    redraw()
    now = target.bounding_box()  # the test is of a redraw, not of a button that moved away
    assert now is not None
    assert now["x"] < x < now["x"] + now["width"]
    assert now["y"] < y < now["y"] + now["height"]
    page.mouse.up()


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


class LabServer:
    """A JupyterLab server in temporary, isolated Jupyter directories.

    ``app`` is the module to run: ``jupyterlab``, or ``notebook`` for Jupyter Notebook 7 (the
    same front-end framework, another shell). ``app_class`` is its configurable's name.
    """

    def __init__(
        self, base: Path, env: dict[str, str], app: str = "jupyterlab", app_class: str = "LabApp"
    ) -> None:
        self.root = base / "root"
        self.root.mkdir()
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        settings = base / "settings"
        # No news toast; no windowing (every cell stays in the DOM); keep widget state on save
        # so a test can check that no media bytes go into it.
        _write_json(
            settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings",
            {"fetchNews": "false", "checkForUpdates": False},
        )
        _write_json(
            settings / "@jupyterlab/notebook-extension/tracker.jupyterlab-settings",
            {"windowingMode": "none"},
        )
        _write_json(
            settings / "@jupyter-widgets/jupyterlab-manager/plugin.jupyterlab-settings",
            {"saveState": True},
        )
        # JupyterLab's debugger asks every new kernel for its state, and logs a console error
        # of its own when a test closes the notebook before the kernel answers: no test here
        # uses the debugger, and every console error fails a test
        _write_json(
            base / "config" / "labconfig" / "page_config.json",
            {"disabledExtensions": {"@jupyterlab/debugger-extension": True}},
        )
        self.env = {
            **os.environ,
            **env,
            "JUPYTER_CONFIG_DIR": str(base / "config"),
            "JUPYTER_DATA_DIR": str(base / "data"),
            "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
            "IPYTHONDIR": str(base / "ipython"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYTHONUNBUFFERED": "1",
        }
        self.log_path = base / "lab.log"
        self.log = self.log_path.open("wb")
        # tethered (as ``mediagen lab`` starts it): a test run killed by a timeout or kill -9
        # leaves no JupyterLab or kernel behind
        self.process = _tether.popen(
            [
                sys.executable,
                "-m",
                app,
                "--no-browser",
                "--ip=127.0.0.1",
                f"--port={self.port}",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root}",
                "--allow-root",
                "--ServerApp.terminals_enabled=False",
                f"--{app_class}.expose_app_in_browser=True",
                f"--LabServerApp.user_settings_dir={settings}",
                f"--LabServerApp.workspaces_dir={base / 'workspaces'}",
            ],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready(base / "lab.log")

    def api(self, path: str, method: str = "GET") -> object:
        request = urllib.request.Request(  # noqa: S310 (our own http://127.0.0.1 server)
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (http only)
            body = response.read()
        return json.loads(body) if body else None

    def _wait_ready(self, log_path: Path) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited early:\n{log_path.read_text()[-3000:]}")
            with contextlib.suppress(OSError):
                self.api("/api/status")
                return
            time.sleep(0.1)
        raise RuntimeError(f"JupyterLab not ready after 60 s:\n{log_path.read_text()[-3000:]}")

    def shutdown_kernels(self) -> None:
        with contextlib.suppress(OSError):
            for kernel in self.api("/api/kernels"):  # type: ignore[union-attr]
                self.api(f"/api/kernels/{kernel['id']}", method="DELETE")

    def stop(self) -> None:
        self.shutdown_kernels()
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook with python3 kernelspec metadata (so it opens without a kernel dialog)."""
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {
            "kernelspec": {
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
                "name": "python3",
            },
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook, indent=1))
    return path


class Notebook:
    """An open notebook in the shared page: run cells, add cells, read outputs."""

    def __init__(self, lab: Lab, name: str) -> None:
        self.lab = lab
        self.page = lab.page
        self.name = name
        self.path = lab.server.root / name

    def wait_idle(self, timeout: float = 60_000) -> None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.get_by_text(KERNEL_IDLE).first.wait_for(timeout=timeout)
        except PlaywrightTimeout:
            state = self._js(
                "const k = panel?.sessionContext?.session?.kernel;"
                "return {status: k?.status, connection: k?.connectionStatus,"
                " current: app.shell.currentWidget?.title?.label,"
                " bar: [...document.querySelectorAll('.jp-StatusBar-Item')]"
                ".map((n) => n.textContent).join(' / ')};"
            )
            raise AssertionError(f"{self.name}: no idle kernel in {timeout} ms: {state}") from None

    def _js(self, body: str, *args: object) -> object:
        return self.page.evaluate(
            f"""([path, ...args]) => {{
                const app = window.jupyterapp;
                const panel = findPanel(path);
                {body}
            }}""",
            [self.name, *args],
        )

    def run_all(self) -> None:
        self.wait_idle()
        self.page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")

    def run_cell(self, index: int) -> None:
        """Run cell ``index``, until it has run."""
        self._js(
            "panel.content.activeCellIndex = args[0];"
            "return app.commands.execute('notebook:run-cell');",
            index,
        )

    def start_cell(self, index: int) -> None:
        """Run cell ``index`` and come back at once, to watch it while it runs."""
        self._js(
            "panel.content.activeCellIndex = args[0];"
            "app.commands.execute('notebook:run-cell'); return null;",
            index,
        )

    def run_in_kernel(self, code: str) -> None:
        """Run ``code`` in the notebook's kernel without a cell, until it has run: the page
        does not scroll to a new cell, so what the mouse is pressing on stays where it is."""
        status = self._js(
            "const kernel = panel.sessionContext.session.kernel;"
            "const future = kernel.requestExecute({code: args[0], store_history: false});"
            "return future.done.then((reply) => reply.content.status);",
            code,
        )
        assert status == "ok", f"{code!r} ended {status}"

    def append_cell(self, source: str) -> int:
        """Add a code cell at the end with ``source``; returns its index (not run)."""
        return self._js(  # type: ignore[return-value]
            """const nb = panel.content;
               nb.activeCellIndex = nb.widgets.length - 1;
               return app.commands.execute('notebook:insert-cell-below').then(() => {
                   nb.activeCell.model.sharedModel.setSource(args[0]);
                   return nb.activeCellIndex;
               });""",
            source,
        )

    def cell(self, index: int):  # -> Locator
        return self.page.locator(f"#{self._panel_id()} .jp-Notebook .jp-Cell").nth(index)

    def output(self, index: int):  # -> Locator
        """Cell ``index``'s outputs but a widget's snapshot (see :meth:`snapshot`)."""
        return self.cell(index).locator(f".jp-OutputArea-output:not(:has(> {SNAPSHOT}))")

    def snapshot(self, index: int):  # -> Locator
        """The output holding the snapshot of the widget cell ``index`` displays."""
        return self.cell(index).locator(f".jp-OutputArea-output:has(> {SNAPSHOT})")

    def _panel_id(self) -> str:
        return self._js("return panel.id;")  # type: ignore[return-value]

    def wait_cell_done(self, index: int, timeout: float = 60_000) -> None:
        """Until cell ``index`` has run (its prompt shows a number, not ``*``)."""
        self.page.wait_for_function(
            """([path, index]) => {
                const app = window.jupyterapp;
                const panel = findPanel(path);
                const cell = panel && panel.content.widgets[index];
                const count = cell && cell.model.executionCount;
                const prompt = cell && cell.promptNode ? cell.promptNode.textContent : '';
                return count !== null && count !== undefined && !prompt.includes('*');
            }""",
            arg=[self.name, index],
            timeout=timeout,
        )

    def save(self, attempts: int = 4) -> dict:
        """Save, as Ctrl-S does, until the notebook is clean. A live output (a widget's
        snapshot) may change the notebook while it is being saved, which leaves it dirty again:
        then it is saved once more, as a user would. A notebook that never settles fails."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        for _ in range(attempts):
            self._js("return app.commands.execute('docmanager:save');")
            try:
                self.page.wait_for_function(
                    """(path) => {
                        const panel = findPanel(path);
                        return panel && !panel.context.model.dirty;
                    }""",
                    arg=self.name,
                    timeout=10_000,
                )
            except PlaywrightTimeout:
                continue
            return json.loads(self.path.read_text())
        raise AssertionError(f"{self.name} was still unsaved after {attempts} saves")


class Lab:
    """One browser page on the session's JupyterLab, reused by every test."""

    def __init__(self, server: LabServer, page) -> None:
        self.server = server
        self.page = page
        self._loaded = False

    def open(self, name: str, cells: list[str]) -> Notebook:
        """Write ``name`` with ``cells``, open it (closing others) and wait for an idle kernel."""
        write_notebook(self.server.root / name, cells)
        if not self._loaded:
            self.page.goto(f"{self.server.url}/lab/tree/{name}?token={self.server.token}&reset")
            self.page.wait_for_function(
                "window.jupyterapp && window.jupyterapp.started", timeout=60_000
            )
            self._loaded = True
        else:
            self.close_all()
            self.page.evaluate(
                "(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", name
            )
        notebook = Notebook(self, name)
        self.page.wait_for_function(
            "(path) => findPanel(path)?.sessionContext?.session?.kernel",
            arg=name,
            timeout=60_000,
        )
        notebook.wait_idle()
        return notebook

    def close_all(self) -> None:
        """Save and close every open document and stop its kernel (frees memory)."""
        self.page.evaluate(
            """async () => {
                const app = window.jupyterapp;
                for (const w of [...app.shell.widgets('main')]) {
                    if (w.context) { await w.context.save(); await w.sessionContext.shutdown(); }
                    // closed without asking: a live output may have changed it since the save,
                    // and "close" would then wait on an "unsaved changes" dialog forever
                    w.dispose();
                }
            }"""
        )
        self.server.shutdown_kernels()

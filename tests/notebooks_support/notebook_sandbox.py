"""Run the tutorial notebooks against a fresh local sandbox: for nbval and to store outputs.

Each notebook gets its *own* organization, member and API key (same plan, balance and discount
every time), so its stored outputs — balances, prices, counts — are the same on every run and
do not depend on which notebooks ran before it. The key reaches the kernel only through the
environment (``MEDIAGEN_API_KEY``), never through the notebook file.

    python tests/notebooks_support/notebook_sandbox.py      # execute every notebook in place
    python tests/notebooks_support/notebook_sandbox.py 01_quickstart.ipynb

The repository's root ``conftest.py`` uses the same pieces under ``pytest --nbval``. This lives
under ``tests/`` so the folder users open (``notebooks/``) holds only the tutorials.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import httpx

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
#: Every notebook's organization starts like this (deterministic stored outputs): as the
#: ready-made organization of the sandbox that ``mediagen lab`` starts, so a user re-running a
#: tutorial sees the figures it shows.
TENANT = {"plan": "pro", "balance": 10_000.0, "discount_percent": 0.0}
_LINE = re.compile(r"^(MEDIAGEN_[A-Z_]+)=(\S+)$")


class NotebookSandbox:
    """A sandbox process at speed 0 in a temporary data dir, with per-notebook tenants."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="mediagen-notebooks-")
        self.process: subprocess.Popen[str] | None = None
        self.base_url = ""
        self._admin_token = ""

    def start(self) -> NotebookSandbox:
        command = [sys.executable, "-m", "mediagen_sandbox", "--port", "0", "--speed", "0"]
        command += ["--data-dir", os.path.join(self._tmp.name, "data")]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True
        )
        found: dict[str, str] = {}
        assert self.process.stdout is not None
        for line in self.process.stdout:
            match = _LINE.match(line.strip())
            if match:
                found[match.group(1)] = match.group(2)
            if "MEDIAGEN_SANDBOX_ADMIN_TOKEN" in found and "MEDIAGEN_BASE_URL" in found:
                break
        if "MEDIAGEN_BASE_URL" not in found:
            self.stop()
            raise RuntimeError("the sandbox did not start")
        stdout = self.process.stdout
        threading.Thread(target=lambda: [None for _ in stdout], daemon=True).start()
        self.base_url = found["MEDIAGEN_BASE_URL"]
        self._admin_token = found["MEDIAGEN_SANDBOX_ADMIN_TOKEN"]
        return self

    def new_key(self, name: str) -> str:
        """A fresh organization + member + key for one notebook; returns the key."""
        headers = {"X-Admin-Token": self._admin_token}
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=30) as admin:
            org = admin.post("/admin/orgs", json={"name": name, **TENANT}).raise_for_status()
            member = admin.post(
                f"/admin/orgs/{org.json()['id']}/members", json={"name": "Notebook author"}
            ).raise_for_status()
            key = admin.post(
                f"/admin/members/{member.json()['id']}/keys", json={"name": name}
            ).raise_for_status()
        return str(key.json()["api_key"])

    def env_for(self, notebook: Path) -> dict[str, str]:
        """The kernel's connection, and a cache (outputs, journal) of its own, empty each run.

        The sandbox's admin token is there too, as ``mediagen lab`` gives it to its kernels:
        the team tutorial makes teammates with it (an API key never goes this way).
        """
        cache = os.path.join(self._tmp.name, "cache", notebook.stem)
        return {
            "MEDIAGEN_BASE_URL": self.base_url,
            "MEDIAGEN_API_KEY": self.new_key(notebook.stem),
            "MEDIAGEN_CACHE_DIR": cache,
            "MEDIAGEN_SANDBOX_ADMIN_TOKEN": self._admin_token,
        }

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._tmp.cleanup()


def strip_widget_state(path: Path) -> None:
    """Drop saved widget state (``metadata.widgets``): large, and not for publishing."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    if notebook.get("metadata", {}).pop("widgets", None) is not None:
        path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", "utf-8")


def notebooks(names: list[str]) -> list[Path]:
    if names:
        return [NOTEBOOKS / name for name in names]
    return sorted(p for p in NOTEBOOKS.glob("*.ipynb"))


def execute(paths: list[Path]) -> int:
    sandbox = NotebookSandbox().start()
    try:
        for path in paths:
            env = {**os.environ, **sandbox.env_for(path)}
            print(f"executing {path.name}", flush=True)
            result = subprocess.run(
                [
                    *(sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook"),
                    *("--execute", "--inplace", "--ExecutePreprocessor.timeout=300", str(path)),
                ],
                env=env,
                cwd=NOTEBOOKS,
                check=False,
            )
            if result.returncode:
                return result.returncode
            strip_widget_state(path)
    finally:
        sandbox.stop()
    return 0


if __name__ == "__main__":
    sys.exit(execute(notebooks(sys.argv[1:])))

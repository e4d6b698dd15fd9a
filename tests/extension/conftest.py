"""An IPython shell with ``%load_ext mediagen`` connected to a fresh sandbox tenant.

The magics connect the way a user's notebook does: ``mediagen.Client()`` reading
``MEDIAGEN_API_KEY`` / ``MEDIAGEN_BASE_URL`` from the environment (set here with monkeypatch).
Only the polling interval is shortened, through the extension's own ``wait_poll_interval``
setting, so tests do not sit through the service's 2-5 s polling cadence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

import mediagen.extension as extension


@dataclass
class CellRun:
    """What one cell did: its result, what it printed, and what it displayed (text reprs)."""

    success: bool
    result: Any
    error: BaseException | None
    stdout: str
    stderr: str
    displayed: list[str]
    html: list[str]

    @property
    def text(self) -> str:
        """Everything a user saw, as text."""
        return "\n".join([self.stdout, self.stderr, *self.displayed])


class Shell:
    """Runs cells in a real ``InteractiveShell`` and records what they showed."""

    def __init__(self, ip: InteractiveShell) -> None:
        self.ip = ip

    @property
    def ns(self) -> dict[str, Any]:
        return self.ip.user_ns

    def run(self, source: str) -> CellRun:
        with capture_output() as captured:
            result = self.ip.run_cell(source, store_history=True)
        error = result.error_in_exec or result.error_before_exec
        return CellRun(
            success=result.success,
            result=result.result,
            error=error,
            stdout=captured.stdout,
            stderr=captured.stderr,
            displayed=[o.data.get("text/plain", "") for o in captured.outputs],
            html=[o.data.get("text/html", "") for o in captured.outputs],
        )


@pytest.fixture
def shell(sandbox, tenant, monkeypatch):
    monkeypatch.setenv("MEDIAGEN_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("MEDIAGEN_API_KEY", tenant.api_key)
    monkeypatch.setattr(extension, "wait_poll_interval", 0.05)
    monkeypatch.setattr(extension, "_client", None)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mediagen.extension")
    try:
        yield Shell(ip)
    finally:
        ip.run_line_magic("unload_ext", "mediagen.extension")
        for name in list(ip.user_ns):
            if not name.startswith("_") and name not in (
                "In",
                "Out",
                "get_ipython",
                "exit",
                "quit",
            ):
                ip.user_ns.pop(name, None)

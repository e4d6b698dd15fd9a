"""One command: `python -m mediagen_sandbox` and `mediagen sandbox` print the ready lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

READY = ("MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY", "MEDIAGEN_SANDBOX_ADMIN_TOKEN")


def _start(cmd: list[str]) -> tuple[subprocess.Popen, dict[str, str]]:
    """Start the command and read its ready lines (pytest-timeout guards a hang)."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: dict[str, str] = {}
    while len(lines) < len(READY):
        line = proc.stdout.readline().decode()
        if not line:
            break
        name, _, value = line.strip().partition("=")
        lines[name] = value
    assert set(lines) == set(READY), (lines, proc.stderr.read() if proc.poll() is not None else "")
    return proc, lines


@pytest.mark.parametrize(
    ("cmd", "stop_signal"),
    [
        ([sys.executable, "-m", "mediagen_sandbox"], signal.SIGINT),
        ([sys.executable, "-m", "mediagen.cli", "sandbox"], signal.SIGTERM),
    ],
    ids=["module", "mediagen-cli"],
)
def test_one_command_prints_ready_lines_and_stops_cleanly(tmp_path, cmd, stop_signal):
    args = ["--port", "0", "--data-dir", str(tmp_path / "d"), "--speed", "0"]
    proc, lines = _start(cmd + args)
    try:
        base = lines["MEDIAGEN_BASE_URL"]
        assert base.startswith("http://127.0.0.1:")
        assert not base.endswith(":0")
        key = lines["MEDIAGEN_API_KEY"]
        r = httpx.get(f"{base}/v1/credits", headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200
        assert r.json()["balance"] > 0
        admin = httpx.get(
            f"{base}/admin/state", headers={"X-Admin-Token": lines["MEDIAGEN_SANDBOX_ADMIN_TOKEN"]}
        )
        assert admin.status_code == 200
    finally:
        proc.send_signal(stop_signal)
        code = proc.wait(20)
    assert code == 0, proc.stderr.read().decode()
    stderr = proc.stderr.read().decode()
    assert "Traceback" not in stderr
    assert key not in stderr

    # Same data dir: the same ready key.
    proc, again = _start(cmd + args)
    proc.send_signal(signal.SIGTERM)
    proc.wait(20)
    assert again["MEDIAGEN_API_KEY"] == key

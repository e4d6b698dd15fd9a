"""One command: `python -m mediagen_sandbox` and `mediagen sandbox` print the ready lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from process_helpers import can_listen, describe, free_port, sigint_default, wait_until_gone

READY = ("MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY", "MEDIAGEN_SANDBOX_ADMIN_TOKEN")


def _start(cmd: list[str]) -> tuple[subprocess.Popen, dict[str, str]]:
    """Start the command and read its ready lines (pytest-timeout guards a hang). It takes
    SIGINT as Ctrl-C does, even when this test runs where SIGINT is ignored."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=sigint_default,
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


def test_kill_9_of_mediagen_sandbox_while_rendering_leaves_nothing_running(tmp_path):
    """``mediagen sandbox`` is the server itself (no parent left to kill): a SIGKILL mid-render
    takes its render workers and multiprocessing's resource tracker with it, and frees the
    port."""
    args = ["--port", "0", "--data-dir", str(tmp_path / "d"), "--speed", "0"]
    proc, lines = _start([sys.executable, "-m", "mediagen.cli", "sandbox", *args])
    try:
        assert psutil.Process(proc.pid).cmdline()[1:3] == ["-m", "mediagen_sandbox"]
        base, port = lines["MEDIAGEN_BASE_URL"], int(lines["MEDIAGEN_BASE_URL"].rsplit(":")[-1])
        headers = {"Authorization": f"Bearer {lines['MEDIAGEN_API_KEY']}"}
        ids = []
        for n in range(6):
            body = {"model": "wave-1", "prompt": f"a kite {n}", "num_frames": 80}
            ids.append(httpx.post(f"{base}/v1/videos", headers=headers, json=body).json()["id"])
        deadline = time.monotonic() + 30
        while len(psutil.Process(proc.pid).children(recursive=True)) < 2:
            assert time.monotonic() < deadline, "no render worker started"
            time.sleep(0.05)
        statuses = [httpx.get(f"{base}/v1/generations/{i}", headers=headers).json() for i in ids]
        assert any(s["status"] == "pending" for s in statuses), "nothing left to render"
        tree = psutil.Process(proc.pid).children(recursive=True)
    finally:
        proc.kill()
        proc.wait(10)
    assert wait_until_gone(tree, timeout=5) == [], describe(tree)
    assert can_listen(port)


@pytest.mark.parametrize(
    "cmd",
    [[sys.executable, "-m", "mediagen_sandbox"], [sys.executable, "-m", "mediagen.cli", "sandbox"]],
    ids=["module", "mediagen-cli"],
)
def test_behind_a_proxy_the_links_name_the_public_url(tmp_path, cmd):
    """``--public-url``: a sandbox reached through a proxy or a forwarded port prints that
    address and names it in its output links, where a client can fetch them."""
    port = free_port()  # the port it listens on, so the test can reach it
    public = "http://127.0.0.1:9"
    args = ["--port", str(port), "--data-dir", str(tmp_path / "d"), "--speed", "0"]
    proc, lines = _start([*cmd, *args, "--public-url", f"{public}/"])
    try:
        assert lines["MEDIAGEN_BASE_URL"] == public
        direct = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {lines['MEDIAGEN_API_KEY']}"}
        body = {"model": "pixel-1", "prompt": "a lighthouse"}
        made = httpx.post(f"{direct}/v1/images", headers=headers, json=body).json()
        deadline = time.monotonic() + 30
        while made["status"] != "completed":
            assert time.monotonic() < deadline, made
            time.sleep(0.05)
            made = httpx.get(f"{direct}/v1/generations/{made['id']}", headers=headers).json()
        url = made["outputs"][0]["url"]
        assert url.startswith(f"{public}/files/"), url
        # the link is the sandbox's own, at the address it was told it is reached by
        fetched = httpx.get(direct + url.removeprefix(public))
        assert fetched.status_code == 200
        assert fetched.content.startswith(b"\x89PNG")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)


@pytest.mark.parametrize("bad", ["127.0.0.1:9000", "ftp://127.0.0.1", "http://", "http://h/?a=1"])
def test_a_public_url_that_is_no_address_is_refused_by_name(tmp_path, bad):
    done = subprocess.run(
        [sys.executable, "-m", "mediagen_sandbox", "--port", "0", "--public-url", bad],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"{bad!r} is not an http:// or https:// address of a host" in done.stderr

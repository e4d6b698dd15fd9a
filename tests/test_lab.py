"""``mediagen lab``: sandbox + JupyterLab from one command, the connection handed to kernels.

The end-to-end test runs the real command (as ``python -m mediagen.cli._lab``) with --no-browser,
waits for JupyterLab to answer, starts a kernel through JupyterLab's REST API, runs code in it
over the kernel websocket to prove the kernel sees the connection and can use it, then presses
Ctrl-C (SIGINT) and checks JupyterLab and the sandbox both stopped and the key was never printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
import websocket

from mediagen.cli._lab import Connection, build_parser, connection_from_env, jupyter_command
from process_helpers import can_listen, describe, free_port, sigint_default, wait_until_gone

STARTUP_TIMEOUT = 120.0


def port_answers(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


def answer_to_head(port: int, header_bytes: int) -> bytes:
    """Everything JupyterLab sends back to a request with one header of ``header_bytes``."""
    head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    head += b"X-Big: " + b"a" * header_bytes + b"\r\n\r\n"
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        with contextlib.suppress(OSError):
            sock.sendall(head)
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                received += chunk
    return received


def run_in_kernel(
    port: int, token: str, kernel_id: str, code: str, until: str | None = None
) -> str:
    """Execute ``code`` in a kernel over JupyterLab's websocket; returns its stdout once it
    finished, or as soon as the output holds ``until`` (the code still running)."""
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels?token={token}", timeout=60
    )
    try:
        msg_id = uuid.uuid4().hex
        ws.send(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "username": "test",
                        "session": uuid.uuid4().hex,
                        "msg_type": "execute_request",
                        "version": "5.3",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "content": {
                        "code": code,
                        "silent": False,
                        "store_history": False,
                        "user_expressions": {},
                        "allow_stdin": False,
                    },
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        out: list[str] = []
        while True:
            message = json.loads(ws.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = message["header"]["msg_type"]
            if kind == "stream":
                out.append(message["content"]["text"])
                if until is not None and until in "".join(out):
                    return "".join(out)
            elif kind == "error":
                raise AssertionError("kernel error: " + "\n".join(message["content"]["traceback"]))
            elif kind == "execute_reply":
                return "".join(out)
    finally:
        ws.close()


KERNEL_CODE = """
import os, httpx
base, key = os.environ["MEDIAGEN_BASE_URL"], os.environ["MEDIAGEN_API_KEY"]
reply = httpx.get(base + "/v1/credits", headers={"Authorization": "Bearer " + key})
print("BASE", base)
print("CREDITS", reply.status_code, "balance" in reply.json())
admin = {"X-Admin-Token": os.environ.get("MEDIAGEN_SANDBOX_ADMIN_TOKEN", "")}
print("ADMIN", httpx.get(base + "/admin/config", headers=admin).status_code)
"""


@dataclass
class Lab:
    """A running ``mediagen lab``: its process, its JupyterLab port and token, what it printed."""

    process: subprocess.Popen
    port: int
    token: str
    output: list[str]
    reader: threading.Thread | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def start_lab(tmp_path: Path) -> Lab:
    """Run ``mediagen lab`` on a free port and wait until JupyterLab answers."""
    port, token = free_port(), uuid.uuid4().hex
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAGEN_")}
    env.update(
        JUPYTER_TOKEN=token,
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        PYTHONUNBUFFERED="1",
    )
    command = [sys.executable, "-m", "mediagen.cli._lab", "--no-browser", "--port", str(port)]
    command += ["--notebook-dir", str(notebooks), "--data-dir", str(tmp_path / "sandbox")]
    command += ["--speed", "0"]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=sigint_default,  # the test presses Ctrl-C, wherever it runs
    )
    lab = Lab(process, port, token, [])
    lab.reader = threading.Thread(target=lambda: lab.output.extend(process.stdout), daemon=True)
    lab.reader.start()
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            assert process.poll() is None, "mediagen lab exited early:\n" + "".join(lab.output)
            with contextlib.suppress(httpx.HTTPError):
                status = httpx.get(f"{lab.base}/api/status", headers=lab.headers, timeout=2)
                if status.status_code == 200:
                    return lab
            assert time.monotonic() < deadline, "JupyterLab never answered:\n" + "".join(lab.output)
            time.sleep(0.25)
    except BaseException:
        lab.stop()
        raise


@pytest.mark.slow
def test_lab_runs_jupyterlab_with_the_sandbox_and_stops_both(tmp_path: Path):
    lab = start_lab(tmp_path)
    port, token, base, headers, output = lab.port, lab.token, lab.base, lab.headers, lab.output
    try:
        assert httpx.get(f"{base}/lab", headers=headers, timeout=10).status_code == 200
        kernel = httpx.post(f"{base}/api/kernels", headers=headers, json={}, timeout=60).json()
        printed = run_in_kernel(port, token, kernel["id"], KERNEL_CODE)
        assert "CREDITS 200 True" in printed
        assert "ADMIN 200" in printed, "the tutorials make teammates with the sandbox's admin API"
        sandbox_url = printed.split("BASE ", 1)[1].split()[0]
        sandbox_port = int(sandbox_url.rsplit(":", 1)[1])
        assert port_answers(sandbox_port)

        # Tornado, under JupyterLab, reads at most 64 KiB of request head (its max_header_size,
        # which jupyter_server leaves at the default) and drops a connection that sends more.
        assert answer_to_head(port, 60 * 1024).startswith(b"HTTP/1.1 403 ")  # read, no token
        assert answer_to_head(port, 100 * 1024) == b""
        assert answer_to_head(port, 4 * 1024 * 1024) == b""
        assert httpx.get(f"{base}/api/status", headers=headers, timeout=10).status_code == 200

        # the sidebar's server extension uses the sandbox too, and hands out no key
        state = httpx.get(f"{base}/mediagen/api/state", headers=headers, timeout=10).json()
        assert state["configured"] is True
        assert state["service"] == sandbox_url
        events = f"{base}/mediagen/api/events?subscriber=test&since="
        first = httpx.get(events + "-1", headers=headers, timeout=30).json()
        live = httpx.get(events + str(first["version"]), headers=headers, timeout=30)
        assert live.json()["credits"]["balance"] > 0
        assert "mgsk_" not in live.text

        lab.process.send_signal(signal.SIGINT)  # what Ctrl-C does
        assert lab.process.wait(timeout=60) == 0
    finally:
        lab.stop()
    assert lab.reader is not None
    lab.reader.join(timeout=5)
    assert not port_answers(port), "JupyterLab still listens after mediagen lab stopped"
    assert not port_answers(sandbox_port), "the sandbox still listens after mediagen lab stopped"
    text = "".join(output)
    assert "sandbox stopped" in text
    admin_token = (tmp_path / "sandbox" / "admin_token").read_text().strip()
    assert f"sandbox admin token (top-ups and /admin): {admin_token}" in text
    assert f"(kept in {tmp_path / 'sandbox' / 'admin_token'})" in text
    assert "mgsk_" not in text, "the key was printed"
    assert "MEDIAGEN_API_KEY=" not in text, "the key was printed"


BUSY_KERNEL_CODE = """
import os, time
print("BASE", os.environ["MEDIAGEN_BASE_URL"], "BUSY", flush=True)
while True:
    time.sleep(0.01)
"""


@pytest.mark.slow
def test_kill_9_of_lab_stops_the_sandbox_jupyterlab_and_a_busy_kernel(tmp_path: Path):
    """SIGKILL gives ``mediagen lab`` no chance to clean up: its children notice by themselves.
    Within 5 s no process it started is left (the kernel, a grandchild, included) and both
    ports can be bound again."""
    lab = start_lab(tmp_path)
    try:
        kernel = httpx.post(f"{lab.base}/api/kernels", headers=lab.headers, json={}, timeout=60)
        printed = run_in_kernel(lab.port, lab.token, kernel.json()["id"], BUSY_KERNEL_CODE, "BUSY")
        sandbox_port = int(printed.split("BASE ", 1)[1].split()[0].rsplit(":", 1)[1])
        tree = psutil.Process(lab.process.pid).children(recursive=True)
        started = " ".join(describe(tree))
        for expected in ("-m mediagen_sandbox", "-m jupyterlab", "ipykernel_launcher"):
            assert expected in started, describe(tree)
        assert (
            httpx.get(f"{lab.base}/api/kernels", headers=lab.headers).json()[0]["execution_state"]
            == "busy"
        )
    finally:
        lab.process.kill()
        lab.process.wait()
    left = wait_until_gone(tree, timeout=5)
    assert left == [], describe(left)
    assert can_listen(lab.port), "JupyterLab's port is still taken"
    assert can_listen(sandbox_port), "the sandbox's port is still taken"


def test_a_real_service_in_the_environment_is_used_instead_of_the_sandbox():
    env = {"MEDIAGEN_BASE_URL": "https://api.example.com", "MEDIAGEN_API_KEY": "secret-key"}
    connection = connection_from_env(env)
    assert connection == Connection("https://api.example.com", "secret-key", sandbox=False)
    assert "secret-key" not in repr(connection)
    assert connection.env() == env
    assert connection_from_env({"MEDIAGEN_BASE_URL": "https://api.example.com"}) is None
    assert connection_from_env({}) is None


def test_jupyter_command_carries_the_options(tmp_path: Path):
    args = build_parser().parse_args(["--port", "9999", "--no-browser"])
    command = jupyter_command(args, tmp_path, ["--ServerApp.ip=0.0.0.0"])
    assert command[:3] == [sys.executable, "-m", "jupyterlab"]
    assert "--port=9999" in command
    assert "--no-browser" in command
    assert f"--ServerApp.root_dir={tmp_path}" in command
    assert command[-1] == "--ServerApp.ip=0.0.0.0"

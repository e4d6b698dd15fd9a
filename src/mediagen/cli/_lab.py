"""``mediagen lab``: one command from a fresh install to a working studio in JupyterLab.

What it does, in order:

1. Decides where generations go. When ``MEDIAGEN_BASE_URL`` and ``MEDIAGEN_API_KEY`` are both
   set, that service is used as it is. Otherwise it starts the local sandbox
   (``python -m mediagen_sandbox`` as a separate process: ``mediagen`` never imports the sandbox)
   with its data kept in a directory across runs, and reads the base URL and the ready API key it
   prints.
2. Starts JupyterLab on the notebooks with the connection in the *environment* of the JupyterLab
   process, so every kernel inherits it and ``mg.Client()`` just works. The key is never written
   into a notebook or a file, and never printed.
3. Stops everything when JupyterLab stops (File > Shut Down) or on Ctrl-C / SIGTERM: JupyterLab
   first (it shuts its kernels down), then the sandbox.

Both children run in their own session so a Ctrl-C reaches only this process, which then
stops them in order (a Ctrl-C sent straight to JupyterLab would make it ask for confirmation).
Both are started through :mod:`mediagen.cli._tether`, so they cannot outlive this process: after a
``kill -9`` of ``mediagen lab`` the sandbox (with its render workers), JupyterLab and its kernels
stop within seconds and their ports are free again.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mediagen._extras import require
from mediagen.cli import _tether

ENV_BASE_URL = "MEDIAGEN_BASE_URL"
ENV_API_KEY = "MEDIAGEN_API_KEY"
ENV_ADMIN_TOKEN = "MEDIAGEN_SANDBOX_ADMIN_TOKEN"  # noqa: S105 (a variable name)
SANDBOX_START_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0
_ANNOUNCEMENT = re.compile(r"^(?:export\s+)?(MEDIAGEN_[A-Z_]+)=(\S+)\s*$")


@dataclass
class Connection:
    """Where the kernels send their requests. ``api_key`` is never printed."""

    base_url: str
    api_key: str
    sandbox: bool

    def __repr__(self) -> str:
        return f"Connection(base_url={self.base_url!r}, sandbox={self.sandbox})"

    def env(self) -> dict[str, str]:
        return {ENV_BASE_URL: self.base_url, ENV_API_KEY: self.api_key}


def connection_from_env(env: Mapping[str, str]) -> Connection | None:
    """The real service named by the environment, or None when the sandbox is needed."""
    base_url, api_key = env.get(ENV_BASE_URL, "").strip(), env.get(ENV_API_KEY, "").strip()
    if base_url and api_key:
        return Connection(base_url=base_url, api_key=api_key, sandbox=False)
    return None


def default_data_dir() -> Path:
    """Where the lab's sandbox keeps its data between runs: the sandbox's own default, so
    ``mediagen sandbox`` and ``mediagen lab`` see the same generations."""
    return Path.home() / ".mediagen" / "sandbox"


def default_notebook_dir() -> Path:
    """``./notebooks`` when it exists (a clone of the project), else the current directory."""
    candidate = Path.cwd() / "notebooks"
    return candidate if candidate.is_dir() else Path.cwd()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mediagen lab",
        description=(
            "Open JupyterLab on the notebooks, connected to the local sandbox (started and "
            "stopped with it) or, when MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY are set, to that "
            "service. Arguments after -- go to JupyterLab."
        ),
    )
    parser.add_argument("--port", type=int, default=8888, help="JupyterLab port (default 8888)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument(
        "--notebook-dir",
        type=Path,
        default=None,
        help="directory JupyterLab opens (default: ./notebooks if present, else .)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"sandbox data directory, kept across runs (default: {default_data_dir()})",
    )
    parser.add_argument(
        "--speed",
        type=float,
        default=None,
        help="sandbox latency factor (0 = instant; default: the sandbox's own)",
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="use the local sandbox even when MEDIAGEN_BASE_URL and MEDIAGEN_API_KEY are set",
    )
    return parser


class _Stop(Exception):
    """Raised in the main thread by SIGTERM, handled like Ctrl-C."""


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop


def _say(message: str) -> None:
    print(f"[mediagen lab] {message}", file=sys.stderr, flush=True)


class Sandbox:
    """The local sandbox as a child process; its log goes to ``sandbox.log`` in its data dir."""

    def __init__(self, data_dir: Path, speed: float | None) -> None:
        self.data_dir = data_dir
        self.speed = speed
        self.process: subprocess.Popen[str] | None = None
        self.log_path = data_dir / "sandbox.log"
        #: the sandbox's admin token (top-ups, ``/admin``); the sandbox keeps it in this file
        self.admin_token = ""
        self.admin_token_path = data_dir / "admin_token"
        self._log: IO[str] | None = None

    def start(self) -> Connection:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "mediagen_sandbox", "--port", "0"]
        command += ["--data-dir", str(self.data_dir)]
        if self.speed is not None:
            command += ["--speed", str(self.speed)]
        self._log = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 (closed in stop)
        self.process = _tether.popen(
            command, stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL, text=True
        )
        values = self._read_announcement()
        # Keep draining stdout so the sandbox never blocks on a full pipe.
        threading.Thread(target=self._drain, daemon=True).start()
        self.admin_token = values.get(ENV_ADMIN_TOKEN, "")
        return Connection(values[ENV_BASE_URL], values[ENV_API_KEY], sandbox=True)

    def _read_announcement(self) -> dict[str, str]:
        """The ``NAME=value`` lines the sandbox prints once it listens (read on a thread, so a
        sandbox that hangs cannot hang us past the timeout)."""
        stdout = self.process.stdout if self.process is not None else None
        found: dict[str, str] = {}

        def read() -> None:
            for line in stdout or ():
                match = _ANNOUNCEMENT.match(line.strip())
                if match:
                    found[match.group(1)] = match.group(2)
                if {ENV_BASE_URL, ENV_API_KEY, ENV_ADMIN_TOKEN} <= set(found):
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(SANDBOX_START_TIMEOUT)
        if ENV_BASE_URL not in found or ENV_API_KEY not in found:
            self.stop()
            raise RuntimeError(
                "the sandbox did not start (no MEDIAGEN_BASE_URL / MEDIAGEN_API_KEY line within "
                f"{SANDBOX_START_TIMEOUT:.0f} s); see its log: {self.log_path}\n" + self._log_tail()
            )
        return dict(found)

    def _drain(self) -> None:
        process = self.process
        if process is None or process.stdout is None:
            return
        for _ in process.stdout:
            pass

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "".join(self.log_path.read_text(encoding="utf-8").splitlines(True)[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process is not None:
            _terminate(self.process, "the sandbox")
        if self._log is not None:
            self._log.close()
            self._log = None


def _terminate(process: subprocess.Popen[Any], what: str) -> None:
    """SIGTERM (a clean shutdown), then SIGKILL if it does not stop in time."""
    if process.poll() is not None:
        return
    try:
        process.terminate()
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        _say(f"{what} did not stop within {STOP_TIMEOUT:.0f} s; killing it")
        process.kill()
        process.wait()


def jupyter_command(
    args: argparse.Namespace, notebook_dir: Path, extra: Sequence[str]
) -> list[str]:
    # `python -m jupyterlab`, not `jupyter lab`: the `jupyter` dispatcher looks `jupyter-lab` up
    # on PATH and may start another environment's JupyterLab (and kernels) than this one.
    command = [sys.executable, "-m", "jupyterlab", f"--port={args.port}"]
    command.append(f"--ServerApp.root_dir={notebook_dir}")
    if args.no_browser:
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI run as root; JupyterLab refuses
    return command + list(extra)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mediagen lab``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    args = build_parser().parse_args(argv)
    require("lab", "mediagen lab")
    notebook_dir = (args.notebook_dir or default_notebook_dir()).resolve()
    if not notebook_dir.is_dir():
        _say(f"no such notebook directory: {notebook_dir}")
        return 2

    previous_sigterm = signal.signal(signal.SIGTERM, _raise_stop)
    sandbox: Sandbox | None = None
    jupyter: subprocess.Popen[bytes] | None = None
    try:
        connection = None if args.sandbox else connection_from_env(os.environ)
        if connection is None:
            sandbox = Sandbox((args.data_dir or default_data_dir()).resolve(), args.speed)
            _say(f"starting the local sandbox (data in {sandbox.data_dir})")
            connection = sandbox.start()
            _say(f"sandbox ready at {connection.base_url}")
            if sandbox.admin_token:  # the sandbox's own admin secret, not an API key
                _say(
                    f"sandbox admin token (top-ups and /admin): {sandbox.admin_token}"
                    f" (kept in {sandbox.admin_token_path})"
                )
        else:
            _say(f"using the service at {connection.base_url} (from {ENV_BASE_URL})")
        env = {**os.environ, **connection.env()}
        if sandbox is not None and sandbox.admin_token:
            # the local sandbox's own admin secret (top-ups, teammates in the tutorials)
            env[ENV_ADMIN_TOKEN] = sandbox.admin_token
        _say(f"opening JupyterLab on {notebook_dir} (Ctrl-C stops it and the sandbox)")
        jupyter = _tether.popen(
            jupyter_command(args, notebook_dir, extra), env=env, stdin=subprocess.DEVNULL
        )
        return jupyter.wait()  # the child's exit code is the command's
    except (KeyboardInterrupt, _Stop):
        _say("stopping")
        return 0
    except RuntimeError as exc:
        _say(str(exc))
        return 1
    finally:
        # Never interrupted half-way: a second Ctrl-C while stopping must not orphan a child.
        previous_sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            if jupyter is not None:
                _terminate(jupyter, "JupyterLab")
            if sandbox is not None:
                sandbox.stop()
                _say("sandbox stopped")
        finally:
            signal.signal(signal.SIGINT, previous_sigint)
            signal.signal(signal.SIGTERM, previous_sigterm)


if __name__ == "__main__":
    sys.exit(main())

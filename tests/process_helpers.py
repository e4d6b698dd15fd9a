"""Helpers for tests that drive real processes: Ctrl-C that always lands, and process trees.

A process inherits an *ignored* SIGINT from its parent: a test run from a shell that ignores
SIGINT (a background job ``pytest &``, some CI runners) would start its children deaf to the
SIGINT it sends them. ``preexec_fn=sigint_default`` puts SIGINT back to its default in the child
before it runs its command; Python then installs its own Ctrl-C handler (KeyboardInterrupt) at
startup as usual. (``subprocess``'s ``restore_signals`` resets SIGPIPE, SIGXFZ and SIGXFSZ only.)
"""

from __future__ import annotations

import signal
import socket
import time

import psutil


def sigint_default() -> None:
    """``preexec_fn`` for a child that a test stops with SIGINT (what Ctrl-C sends)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def alive(process: psutil.Process) -> bool:
    """Still running: gone and zombie (dead, its exit status not yet collected) both count as
    stopped."""
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_until_gone(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait up to ``timeout`` seconds for all of ``processes`` to stop; those still running."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in processes if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def describe(processes: list[psutil.Process]) -> list[str]:
    shown = []
    for process in processes:
        try:
            shown.append(f"{process.pid} {' '.join(process.cmdline())[:160]}")
        except psutil.Error:
            shown.append(f"{process.pid} (gone)")
    return shown


def free_port() -> int:
    """A port nothing listens on now, for a server told its port before it starts."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def can_listen(port: int) -> bool:
    """A server could bind ``port`` on 127.0.0.1 again (as servers do, with SO_REUSEADDR)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return False
        return True

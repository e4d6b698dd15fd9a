"""Child processes that cannot outlive the process that started them.

A ``kill -9`` of ``mediagen lab``, a CI runner's timeout or the OOM killer give it no chance to
stop its servers, so they have to notice by themselves. :func:`popen` starts a command through
this module run as a tiny launcher (``python -I _tether.py FD -- COMMAND...``), which runs
COMMAND as its child and watches its own parent:

- FD is the read end of a pipe whose write end only the starting process holds (the
  *lifeline*): the kernel closes it when that process dies, however it died, and reading FD then
  returns end-of-file. That works on every POSIX system.
- On Linux the kernel also sends the launcher SIGHUP when its parent dies (``PR_SET_PDEATHSIG``;
  it covers a lifeline copied into a process forked without exec), and makes the launcher the
  reaper of COMMAND's orphans (``PR_SET_CHILD_SUBREAPER``): a process COMMAND started in a session
  of its own, such as a Jupyter kernel, comes back here when COMMAND dies instead of going to
  init, so it is found and stopped too. COMMAND gets SIGKILL if the launcher itself dies.

When the parent is gone COMMAND gets SIGTERM and ``ORPHAN_GRACE`` seconds to stop cleanly, then
it and every descendant left get SIGKILL. A SIGTERM or SIGINT sent to the launcher is passed on
to COMMAND (a clean stop asked by the parent, which waits for it); when COMMAND exits, whatever
it left running is killed and COMMAND's exit status becomes the launcher's.

The launcher imports only the standard library and runs with ``python -I``: it starts in tens
of milliseconds and nothing in COMMAND's environment (``PYTHONPATH`` included) changes it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

ORPHAN_GRACE = 2.0  # seconds COMMAND has to stop cleanly once the parent is gone
POLL_INTERVAL = 0.1
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_LINUX = sys.platform.startswith("linux")

# The lifeline of this process (read end, write end), made on first use and never closed: the
# write end closes when this process exits, however it exits.
_lifeline: tuple[int, int] | None = None


def popen(command: Sequence[str], **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **options)``, except that the process (and whatever it
    starts) stops when this process dies, even by SIGKILL.

    The returned process is the launcher, in a session of its own: ``terminate()`` asks the
    command to stop cleanly and ``wait()`` returns the command's exit status. Call it from the
    main thread (or one that lives as long as the process): Linux sends the parent-death signal
    when the *thread* that started the launcher ends. Outside POSIX the command is started
    directly, in a new process group.
    """
    if os.name != "posix":
        flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        return subprocess.Popen(list(command), creationflags=flags, **options)
    global _lifeline
    if _lifeline is None:
        _lifeline = os.pipe()
    read_end = _lifeline[0]
    launcher = [sys.executable, "-I", os.path.abspath(__file__), str(read_end), "--"]
    return subprocess.Popen(
        [*launcher, *command], pass_fds=(read_end,), start_new_session=True, **options
    )


def _prctl(option: int, value: int) -> bool:
    """Linux's ``prctl(option, value)``; False where it is not available."""
    if not _LINUX:
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        zero = ctypes.c_ulong(0)
        result = libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), zero, zero, zero)
    except (OSError, AttributeError):
        return False
    return bool(result == 0)


class _Launcher:
    """The launcher's side: run the command, watch the parent, stop everything."""

    def __init__(self, lifeline: int, command: list[str]) -> None:
        self.lifeline = lifeline
        self.command = command
        self.parent_gone = False
        self.stop_asked = False
        self.pid = os.getpid()

    def on_parent_death(self, signum: int, frame: object) -> None:
        self.parent_gone = True

    def on_stop(self, signum: int, frame: object) -> None:
        self.stop_asked = True

    def _in_child(self) -> None:
        """Runs in COMMAND's process before exec (the launcher has one thread): die with the
        launcher; if it is already gone, now."""
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != self.pid:
            os.kill(os.getpid(), signal.SIGKILL)
        if not _LINUX:
            os.setpgid(0, 0)  # the group is what _stop_descendants can reach there

    def run(self) -> int:
        signal.signal(signal.SIGHUP, self.on_parent_death)
        signal.signal(signal.SIGTERM, self.on_stop)
        signal.signal(signal.SIGINT, self.on_stop)
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGHUP)
        if self._lifeline_closed():
            return 1  # the parent died before it could be watched
        child = subprocess.Popen(self.command, preexec_fn=self._in_child)
        deadline: float | None = None
        forwarded = False
        while (status := child.poll()) is None:
            if self.stop_asked and not forwarded:
                forwarded = True
                child.terminate()
            if not self.parent_gone and self._lifeline_closed():
                self.parent_gone = True
            if self.parent_gone and deadline is None:
                deadline = time.monotonic() + ORPHAN_GRACE
                child.terminate()
            if deadline is not None and time.monotonic() > deadline:
                child.kill()
                status = child.wait()
                break
            time.sleep(POLL_INTERVAL)
        self._stop_descendants(child.pid)
        return status if status >= 0 else 128 - status

    def _lifeline_closed(self) -> bool:
        """True once the parent's end of the lifeline is closed (read returns end-of-file)."""
        try:
            readable, _, _ = select.select([self.lifeline], [], [], 0)
            return bool(readable) and os.read(self.lifeline, 1) == b""
        except OSError:
            return True

    def _stop_descendants(self, child_pid: int) -> None:
        """SIGKILL whatever COMMAND left behind, and reap it."""
        if not _LINUX:
            with contextlib.suppress(OSError):
                os.killpg(child_pid, signal.SIGKILL)
            return
        for _ in range(100):
            left = _descendants(self.pid)
            if not left:
                return
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            _reap(timeout=0.05)


def _descendants(root: int) -> list[int]:
    """Every process below ``root``, from ``/proc`` (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # "pid (name) state ppid ...": the name may hold spaces and parentheses
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found


def _reap(timeout: float) -> None:
    """Collect the exit status of our dead children (orphans adopted as subreaper included)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.005)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("usage: python -I _tether.py FD -- COMMAND...", file=sys.stderr)
        return 2
    return _Launcher(int(argv[0]), argv[2:]).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

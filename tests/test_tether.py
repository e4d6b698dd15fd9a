"""``mediagen.cli._tether``: a command started through it cannot outlive the process that started
it.

Each mechanism is tested alone, with real processes: the lifeline pipe (the test process stays
alive and only closes its end), Linux's parent-death signal (the lifeline is kept open by a
forked copy, so only the signal can tell), and the clean-up of what the command leaves behind
in a session of its own (as Jupyter's kernels are).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from mediagen.cli import _tether
from process_helpers import describe, wait_until_gone

LAUNCHER = [sys.executable, "-I", _tether.__file__]

# Prints its pid and the pid of a child it starts in a session of its own, then sleeps.
FAMILY = """
import subprocess, sys, time
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                       start_new_session=True)
print(__import__("os").getpid(), kid.pid, flush=True)
time.sleep(600)
"""

# The same, but it ignores the SIGTERM that asks it to stop.
STUBBORN = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + FAMILY


def _family(stdout, *, gone_ok: bool = False) -> list[psutil.Process]:
    """The processes whose pids the script printed; with ``gone_ok``, those still there (a
    script that exits at once may be gone, its leftovers stopped, before the line is read)."""
    found = []
    for pid in stdout.readline().split():
        try:
            found.append(psutil.Process(int(pid)))
        except psutil.NoSuchProcess:
            if not gone_ok:
                raise
    return found


@pytest.mark.parametrize("script", [FAMILY, STUBBORN], ids=["stops-on-sigterm", "ignores-it"])
def test_closing_the_lifeline_stops_the_command_and_what_it_started(script):
    read_end, write_end = os.pipe()
    launcher = subprocess.Popen(
        [*LAUNCHER, str(read_end), "--", sys.executable, "-c", script],
        pass_fds=(read_end,),
        stdout=subprocess.PIPE,
        text=True,
    )
    os.close(read_end)
    try:
        family = _family(launcher.stdout)
        assert len(family) == 2
        time.sleep(0.3)
        assert wait_until_gone(family, timeout=0) == family, "stopped before its parent went"
        started = time.monotonic()
        os.close(write_end)  # what the kernel does when the parent dies; this test lives on
        launcher.wait(timeout=_tether.ORPHAN_GRACE + 5)
        assert wait_until_gone(family, timeout=1) == [], describe(family)
        assert time.monotonic() - started < _tether.ORPHAN_GRACE + 2
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()


INTERMEDIATE = """
import os, subprocess, sys, time
read_end, write_end = os.pipe()
holder = os.fork()
if holder == 0:  # forked without exec: this copy keeps the lifeline open after the parent died
    time.sleep(600)
    os._exit(0)
subprocess.Popen([*sys.argv[1:4], str(read_end), "--", *sys.argv[4:]], pass_fds=(read_end,))
print(holder, flush=True)
time.sleep(600)
"""


def test_on_linux_the_parent_death_signal_stops_it_even_with_the_lifeline_held_open():
    parent = subprocess.Popen(
        [sys.executable, "-c", INTERMEDIATE, *LAUNCHER, sys.executable, "-c", FAMILY],
        stdout=subprocess.PIPE,
        text=True,
    )
    holder = None
    try:
        holder = psutil.Process(int(parent.stdout.readline()))
        family = _family(parent.stdout)  # the command's output goes to the same pipe
        launcher = psutil.Process(family[0].ppid())
        parent.kill()
        parent.wait()
        assert holder.is_running(), "the lifeline's copy must stay open for this test"
        gone = wait_until_gone([launcher, *family], timeout=_tether.ORPHAN_GRACE + 3)
        assert gone == [], describe(gone)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if holder is not None and holder.is_running():
            holder.kill()
            holder.wait(5)


def test_the_command_s_exit_status_is_the_launcher_s_and_its_leftovers_are_stopped():
    script = FAMILY.replace("time.sleep(600)\n", "sys.exit(3)\n")
    read_end, write_end = os.pipe()
    launcher = subprocess.Popen(
        [*LAUNCHER, str(read_end), "--", sys.executable, "-c", script],
        pass_fds=(read_end,),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        family = _family(launcher.stdout, gone_ok=True)
        assert launcher.wait(timeout=10) == 3
        assert wait_until_gone(family, timeout=1) == [], describe(family)
    finally:
        os.close(read_end)
        os.close(write_end)
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()


def test_sigterm_to_the_launcher_is_passed_on_to_the_command():
    process = _tether.popen([sys.executable, "-c", FAMILY], stdout=subprocess.PIPE, text=True)
    try:
        family = _family(process.stdout)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 128 + signal.SIGTERM
        assert wait_until_gone(family, timeout=1) == [], describe(family)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

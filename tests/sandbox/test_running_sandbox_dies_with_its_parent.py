"""A process that started a sandbox with ``running_sandbox`` and was killed (``kill -9``, a CI
runner's timeout, the OOM killer) leaves no sandbox behind holding its port: the sandbox reads
the end of its standard input, a pipe that only the dead process held."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import textwrap

import psutil

from process_helpers import can_listen, describe, wait_until_gone

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from mediagen_sandbox.testing import running_sandbox
    with running_sandbox(speed=0.0) as sandbox:
        print(sandbox.process.pid, sandbox.base_url.rsplit(":", 1)[1], flush=True)
        time.sleep(600)
    """
)


def test_kill_9_of_the_process_that_started_a_sandbox_stops_the_sandbox():
    parent = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        pid, port = (int(x) for x in parent.stdout.readline().split())  # type: ignore[union-attr]
        sandbox = psutil.Process(pid)
        tree = [sandbox, *sandbox.children(recursive=True)]
        assert not can_listen(port), "the sandbox is serving"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        left = wait_until_gone(tree, timeout=10)
        assert left == [], f"still running after the parent's kill -9: {describe(left)}"
        assert can_listen(port)
    finally:
        if parent.poll() is None:
            parent.kill()
        parent.wait(10)
        for process in tree:  # a failed run leaves nothing behind either
            with contextlib.suppress(psutil.Error):
                process.kill()

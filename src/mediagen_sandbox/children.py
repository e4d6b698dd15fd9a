"""Worker processes of the server: render workers and the body parser.

Each runs at a lower OS priority than the server (what it does is never more urgent than
answering a request) and watches its server: it waits on its parent's sentinel and exits when
the server is gone, however it went (a kill -9 included), and with the last of them goes
multiprocessing's resource tracker, which lives as long as anyone holds its pipe.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import threading
from concurrent.futures import ProcessPoolExecutor


def process_pool(workers: int, niceness: int) -> ProcessPoolExecutor:
    """``workers`` spawned processes at ``niceness``, each dying with the server."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_child,
        initargs=(niceness,),
    )


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and end the processes now (work in progress is redone later)."""
    workers = list(getattr(pool, "_processes", {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
    # The pool's manager thread closes its wake-up pipe as it ends; the interpreter's exit
    # writes to that pipe unless it is closed already, and a close racing the write is an
    # EBADF traceback on a clean stop. Let the thread finish first.
    if manager is not None:
        manager.join(timeout=5)


def _start_child(niceness: int) -> None:
    """Runs first in each child: lower priority than the server, and die with the server."""
    with contextlib.suppress(OSError):
        os.nice(niceness)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(
            target=_exit_with, args=(parent.sentinel,), name="parent-watch", daemon=True
        ).start()


def _exit_with(sentinel: int) -> None:
    """Return never, unless the parent exited: then end this process at once."""
    multiprocessing.connection.wait([sentinel])
    os._exit(0)

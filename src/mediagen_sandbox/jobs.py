"""The job runner: waits out the simulated latency, renders in worker processes, settles credits.

Why processes: rendering (PIL, PyAV, numpy) holds the GIL and burns CPU; in a small pool of
niced worker processes it cannot slow request handling down. A job's life:

1. ``schedule(job)`` puts it on a timer heap at ``job.due_at`` (now + latency × speed).
2. When due, a planned failure is settled at once; otherwise the job waits in its
   organization's queue, and a free worker takes the next job round-robin across the
   organizations, an organization holding at most ``workers - 1`` workers (all of them with a
   single worker). So one organization's flood of large jobs never makes another's one image
   wait behind it: a worker is always free for, or next to go to, someone else.
3. ``finalize``: one write transaction marks the generation completed (reservation -> charge,
   output assets registered) or failed (reservation refunded, error recorded). It only acts on a
   generation that is still pending, so a job settled twice (e.g. after a restart) is harmless.

Everything a job needs is stored with the generation (``job_json``), so pending generations are
re-scheduled after a restart; one whose job cannot be read back is failed and refunded.

Workers watch their server: each waits on its parent's sentinel and exits when the server is
gone, however it went (a kill -9 included), and with them goes multiprocessing's resource
tracker, which lives as long as anyone holds its pipe.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .db import assets, ledger
from .db import generations as rows
from .db.store import Store
from .media.spec import OutputSpec, RenderedOutput
from .units import iso, utcnow

log = logging.getLogger("mediagen_sandbox.jobs")

RENDER_NICENESS = 2  # a little below the server, so renders yield to request handling


@dataclass
class OutputSlot:
    """Where one output goes: its asset id, file name and path (chosen at submit time)."""

    asset_id: str
    filename: str
    path: str
    b64: bool = False


@dataclass
class Job:
    generation_id: str
    due_at: float  # epoch seconds
    specs: list[OutputSpec]
    slots: list[OutputSlot]
    failure: tuple[str, str] | None = None
    result_meta: dict | None = None
    extra: dict = field(default_factory=dict)
    org_id: str = ""  # whose turn it is when workers are shared out

    def to_json(self) -> str:
        return json.dumps(
            {
                "due_at": self.due_at,
                "specs": [asdict(s) for s in self.specs],
                "slots": [asdict(s) for s in self.slots],
                "failure": list(self.failure) if self.failure else None,
                "result_meta": self.result_meta,
            }
        )

    @classmethod
    def from_json(cls, generation_id: str, text: str, org_id: str = "") -> Job:
        data = json.loads(text)
        specs = []
        for raw in data["specs"]:
            raw["segments"] = tuple(tuple(pair) for pair in raw.get("segments") or ())
            specs.append(OutputSpec(**raw))
        failure = data.get("failure")
        return cls(
            generation_id=generation_id,
            due_at=float(data["due_at"]),
            specs=specs,
            slots=[OutputSlot(**s) for s in data["slots"]],
            failure=(failure[0], failure[1]) if failure else None,
            result_meta=data.get("result_meta"),
            org_id=org_id,
        )


def _start_worker() -> None:
    """Runs first in each worker: lower priority than the server, and die with the server."""
    with contextlib.suppress(OSError):
        os.nice(RENDER_NICENESS)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(
            target=_exit_with, args=(parent.sentinel,), name="parent-watch", daemon=True
        ).start()


def _exit_with(sentinel: int) -> None:
    """Return never, unless the parent exited: then end this worker at once."""
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


def render_job(specs: list[OutputSpec], paths: list[str]) -> list[RenderedOutput]:
    """Runs in a worker process."""
    from .media import render

    return [render(spec, path) for spec, path in zip(specs, paths, strict=True)]


class JobRunner:
    def __init__(self, store: Store, workers: int = 2) -> None:
        self.store = store
        self.workers = workers
        self.per_org = max(1, workers - 1)
        self._heap: list[tuple[float, int, Job]] = []
        self._seq = 0
        self._cond = threading.Condition()
        # organization -> its due jobs; dict order is the round-robin order
        self._waiting: dict[str, deque[Job]] = {}
        self._rendering: dict[str, int] = {}  # organization -> jobs in the pool
        self._inflight = 0
        self._pool: ProcessPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._stopping = False
        self._thread = threading.Thread(target=self._timer_loop, name="job-timer", daemon=True)
        self.on_settled: Callable[[str], None] | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()
        threading.Thread(target=self._warm_up_quietly, name="pool-warm-up", daemon=True).start()

    def _warm_up_quietly(self) -> None:
        try:
            self.warm_up()
        except Exception:
            log.warning("render workers did not start ahead of time", exc_info=True)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout=5)
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            workers = list(getattr(pool, "_processes", {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for worker in workers:  # a render in progress is resumed after the restart
                worker.terminate()
            for worker in workers:
                worker.join(timeout=5)

    def warm_up(self) -> None:
        """Start the worker processes now rather than on the first job."""
        pool = self._get_pool()
        for future in [pool.submit(os.getpid) for _ in range(self.workers)]:
            future.result(timeout=60)

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                )
            return self._pool

    # -- scheduling -------------------------------------------------------------------------

    def schedule(self, job: Job) -> None:
        with self._cond:
            self._seq += 1
            heapq.heappush(self._heap, (job.due_at, self._seq, job))
            self._cond.notify()

    def resume_pending(self) -> int:
        """Re-schedule every pending generation (after a restart); returns how many."""
        pending = rows.pending_jobs(self.store)
        for row in pending:
            try:
                job = Job.from_json(row["id"], row["job_json"], row["org_id"])
            except Exception:
                self.finalize_failure(
                    row["id"], "provider_error", "The job was lost when the sandbox restarted."
                )
                continue
            self.schedule(job)
        return len(pending)

    def _timer_loop(self) -> None:
        while True:
            with self._cond:
                while not self._stopping:
                    now = time.time()
                    if self._heap and self._heap[0][0] <= now:
                        break
                    timeout = (self._heap[0][0] - now) if self._heap else None
                    self._cond.wait(timeout)
                if self._stopping:
                    return
                _, _, job = heapq.heappop(self._heap)
            try:
                self._start(job)
            except Exception:
                log.exception("job %s could not start", job.generation_id)
                self.finalize_failure(
                    job.generation_id, "provider_error", "The job could not be started."
                )

    def _start(self, job: Job) -> None:
        if job.failure:
            self.finalize_failure(job.generation_id, *job.failure)
            return
        with self._cond:
            self._waiting.setdefault(job.org_id, deque()).append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand due jobs to free workers, the organizations taking turns."""
        while True:
            with self._cond:
                if self._stopping or self._inflight >= self.workers:
                    return
                job = self._next_job()
                if job is None:
                    return
                self._inflight += 1
                self._rendering[job.org_id] = self._rendering.get(job.org_id, 0) + 1
            self._send_to_pool(job)

    def _next_job(self) -> Job | None:
        """The next organization in turn that holds fewer than ``per_org`` workers gives its
        oldest job and goes to the back of the line (call with ``_cond`` held)."""
        for org, queue in self._waiting.items():
            if self._rendering.get(org, 0) < self.per_org:
                job = queue.popleft()
                del self._waiting[org]
                if queue:
                    self._waiting[org] = queue
                return job
        return None

    def _send_to_pool(self, job: Job) -> None:
        try:
            future = self._get_pool().submit(render_job, job.specs, [s.path for s in job.slots])
        except Exception:
            log.exception("render submit failed for %s", job.generation_id)
            self._render_done(job, None)
            return
        future.add_done_callback(lambda fut: self._render_done(job, fut))

    def _render_done(self, job: Job, future: Future | None) -> None:
        try:
            rendered = future.result() if future is not None else None
        except Exception as exc:
            log.warning("render failed for %s: %s", job.generation_id, exc)
            if type(exc).__name__ == "BrokenProcessPool":
                with self._pool_lock:
                    self._pool = None
            rendered = None
        try:
            if rendered is None:
                self.finalize_failure(
                    job.generation_id, "provider_error", "Rendering the output failed."
                )
            else:
                self.finalize_success(job, rendered)
        except Exception:
            log.exception("settling %s failed", job.generation_id)
        with self._cond:
            self._inflight -= 1
            left = self._rendering.pop(job.org_id) - 1
            if left:
                self._rendering[job.org_id] = left
        self._dispatch()

    # -- settlement -------------------------------------------------------------------------

    def finalize_success(self, job: Job, rendered: list[RenderedOutput]) -> None:
        outputs: list[dict[str, Any]] = []
        now = iso(utcnow())
        with self.store.write() as conn:
            gen = rows.pending_for_settling(conn, job.generation_id)
            if gen is None:
                return
            for spec, slot, out in zip(job.specs, job.slots, rendered, strict=True):
                asset = assets.NewAsset(
                    asset_id=slot.asset_id,
                    org_id=gen["org_id"],
                    member_id=gen["member_id"],
                    media=spec.media,
                    content_type=out.content_type,
                    filename=slot.filename,
                    size_bytes=out.size_bytes,
                    path=slot.path,
                    width=out.width,
                    height=out.height,
                    duration_seconds=out.duration_seconds,
                    generation_id=job.generation_id,
                )
                assets.insert_ready(conn, asset, at=now)
                outputs.append(
                    {
                        "asset_id": slot.asset_id,
                        "content_type": out.content_type,
                        "duration_seconds": out.duration_seconds,
                        "width": out.width,
                        "height": out.height,
                        "filename": slot.filename,
                        "b64": slot.b64,
                    }
                )
            amount = gen["credits_reserved"]
            rows.mark_completed(
                conn,
                job.generation_id,
                now,
                amount,
                json.dumps(outputs),
                json.dumps(job.result_meta) if job.result_meta else None,
            )
            ledger.charge(conn, gen["org_id"], gen["member_id"], job.generation_id, amount)
        if self.on_settled:
            self.on_settled(job.generation_id)

    def finalize_failure(self, generation_id: str, code: str, message: str) -> None:
        with self.store.write() as conn:
            gen = rows.pending_for_settling(conn, generation_id)
            if gen is None:
                return
            rows.mark_failed(conn, generation_id, iso(utcnow()), code, message)
            ledger.refund(
                conn,
                gen["org_id"],
                gen["member_id"],
                generation_id,
                gen["credits_reserved"],
                gen["cycle"],
            )
        if self.on_settled:
            self.on_settled(generation_id)


def asset_path(data_dir: Path, asset_id: str, extension: str) -> str:
    return str(data_dir / "assets" / f"{asset_id}{extension}")

"""The job runner: waits out the simulated latency, renders in worker processes, settles credits.

Why processes: rendering (PIL, PyAV, numpy) holds the GIL and burns CPU; in niced worker
processes it cannot slow request handling down. A job's life:

1. ``schedule(job)`` puts it on a timer heap at ``job.due_at`` (now + latency × speed).
2. When due, a planned failure is settled at once; otherwise the job waits in its
   organization's queue, and free workers take the next jobs round-robin across the
   organizations, in two lanes of workers (see :class:`Lane`):

   - the *foreground* lane renders lone jobs: an organization's job when it has nothing else
     rendering or waiting (someone at a notebook, waiting for that one result);
   - the *background* lane, at the lowest OS priority, renders the jobs of an organization
     with a backlog (a batch, a flood). On an idle machine it runs just as fast; on a busy
     one it takes what the server and the lone jobs leave.

   - the *long* lane, one worker at the lowest OS priority, renders what takes minutes
     whoever sent it (:func:`is_long`: a 20-segment script of 5,000 characters each is an
     hour and a half of speech, minutes in the MP3 encoder). Long renders wait for it in their own
     round-robin line, so however many arrive they hold one worker, and the other lanes stay
     free for everything else.

   So one organization's flood of large jobs never makes another's one image wait behind it,
   neither for a worker nor for the CPU.
3. ``finalize``: one write transaction marks the generation completed (reservation -> charge,
   output assets registered) or failed (reservation refunded, error recorded). It only acts on a
   generation that is still pending, so a job settled twice (e.g. after a restart) is harmless.
   The worker is handed its next job before the settling starts, so it never waits on SQLite.

Everything a job needs is stored with the generation (``job_json``), so pending generations are
re-scheduled after a restart; one whose job cannot be read back is failed and refunded.

Workers die with their server, however it went (see :mod:`mediagen_sandbox.children`), and a
stopping server ends the renders in progress at once (they are redone after a restart).
"""

from __future__ import annotations

import heapq
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .children import process_pool, stop_pool
from .db import assets, generations as rows, ledger
from .db.store import Store
from .media.spec import OutputSpec, RenderedOutput, media_seconds
from .units import iso, utcnow

log = logging.getLogger("mediagen_sandbox.jobs")

FOREGROUND_NICENESS = 2  # a little below the server, so renders yield to request handling
BACKGROUND_NICENESS = 19  # the lowest: a backlog renders on what everyone else leaves
LONG_WORKERS = 1  # renders of minutes take turns on one worker
# Media a job makes beyond which its render holds a worker for minutes: speech renders at about
# 30x real time on a busy core (most of it in the MP3 encoder), so ten minutes take some 20 s,
# an hour two minutes or more.
LONG_MEDIA_SECONDS = 600.0


def lane_sizes(cpus: int | None) -> tuple[int, int]:
    """(foreground, background) workers for a machine with ``cpus`` cores.

    A render is one CPU-bound process, so workers beyond the cores only take turns on them.
    The background lane gets every core but the one the server needs; the foreground lane
    keeps at least two workers, so a lone job finds one free even while another
    organization's first job (before its backlog builds up) is still rendering there.
    """
    cpus = max(1, cpus or 1)
    return max(2, cpus // 2), max(1, cpus - 1)


def is_long(specs: list[OutputSpec]) -> bool:
    """Whether rendering ``specs`` holds a worker for minutes (the long lane's jobs)."""
    return sum(media_seconds(spec) for spec in specs) > LONG_MEDIA_SECONDS


@dataclass
class Lane:
    """Render workers at one OS priority; ``busy`` counts the jobs they hold."""

    name: str
    workers: int
    niceness: int
    busy: int = 0
    pool: ProcessPoolExecutor | None = None

    @property
    def free(self) -> bool:
        return self.busy < self.workers


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


def render_job(specs: list[OutputSpec], paths: list[str]) -> list[RenderedOutput]:
    """Runs in a worker process."""
    from .media import render

    return [render(spec, path) for spec, path in zip(specs, paths, strict=True)]


class JobRunner:
    def __init__(self, store: Store, workers: int | None = None) -> None:
        """``workers``: per lane; by default from the machine's cores (:func:`lane_sizes`)."""
        self.store = store
        foreground, background = lane_sizes(os.cpu_count()) if workers is None else (workers,) * 2
        self.foreground = Lane("foreground", foreground, FOREGROUND_NICENESS)
        self.background = Lane("background", background, BACKGROUND_NICENESS)
        self.long = Lane("long", LONG_WORKERS, BACKGROUND_NICENESS)
        self._heap: list[tuple[float, int, Job]] = []
        self._seq = 0
        self._cond = threading.Condition()
        # organization -> its due jobs; dict order is the round-robin order
        self._waiting: dict[str, deque[Job]] = {}
        self._waiting_long: dict[str, deque[Job]] = {}  # the same, for the long lane
        # organization -> its jobs in the foreground and background pools
        self._rendering: dict[str, int] = {}
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
            if not self._stopping:  # a stop during the warm-up ends it on purpose: not news
                log.warning("render workers did not start ahead of time", exc_info=True)

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout=5)
        for lane in (self.foreground, self.background, self.long):
            with self._pool_lock:
                pool, lane.pool = lane.pool, None
            if pool is not None:  # a render in progress is resumed after the restart
                stop_pool(pool)

    def warm_up(self) -> None:
        """Start the foreground workers now rather than on the first job (the background
        lane starts when a backlog first forms)."""
        pool = self._get_pool(self.foreground)
        for future in [pool.submit(os.getpid) for _ in range(self.foreground.workers)]:
            future.result(timeout=60)

    def _get_pool(self, lane: Lane) -> ProcessPoolExecutor:
        with self._pool_lock:
            if self._stopping:  # stop() has taken (or is taking) the pools: start no new one
                raise RuntimeError("the job runner is stopping")
            if lane.pool is None:
                lane.pool = process_pool(lane.workers, lane.niceness)
            return lane.pool

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
        line = self._waiting_long if is_long(job.specs) else self._waiting
        with self._cond:
            line.setdefault(job.org_id, deque()).append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand due jobs to free workers, the organizations taking turns."""
        while True:
            with self._cond:
                if self._stopping:
                    return
                picked = self._next_job()
                if picked is None:
                    return
                job, lane = picked
                lane.busy += 1
                if lane is not self.long:
                    self._rendering[job.org_id] = self._rendering.get(job.org_id, 0) + 1
            self._send_to_pool(job, lane)

    def _next_job(self) -> tuple[Job, Lane] | None:
        """The next organization in turn with a free worker in its lane gives its oldest job
        and goes to the back of the line (call with ``_cond`` held). Long renders have their
        own line and lane, so one never stands in front of a short job."""
        if self.long.free:
            job = _take_turn(self._waiting_long, next(iter(self._waiting_long), None))
            if job is not None:
                return job, self.long
        for org, queue in self._waiting.items():
            lane = self._lane_for(org, queue)
            if lane is not None:
                job = _take_turn(self._waiting, org)
                assert job is not None
                return job, lane
        return None

    def _lane_for(self, org: str, queue: deque[Job]) -> Lane | None:
        """A lone job takes any free worker, the foreground first; a backlog waits for the
        background lane."""
        lone = len(queue) == 1 and not self._rendering.get(org)
        lanes = (self.foreground, self.background) if lone else (self.background,)
        return next((lane for lane in lanes if lane.free), None)

    def _send_to_pool(self, job: Job, lane: Lane) -> None:
        try:
            pool = self._get_pool(lane)
            future = pool.submit(render_job, job.specs, [s.path for s in job.slots])
        except Exception:
            if self._stopping:  # the job stays pending: the next start resumes it
                return
            log.exception("render submit failed for %s", job.generation_id)
            self._render_done(job, lane, None)
            return
        future.add_done_callback(lambda fut: self._render_done(job, lane, fut))

    def _render_done(self, job: Job, lane: Lane, future: Future | None) -> None:
        if self._stopping:  # cut off by the stop: left pending, rendered again after a restart
            return
        try:
            rendered = future.result() if future is not None else None
        except Exception as exc:
            log.warning("render failed for %s: %s", job.generation_id, exc)
            if type(exc).__name__ == "BrokenProcessPool":
                with self._pool_lock:
                    lane.pool = None
            rendered = None
        # the worker is free: it starts the next render while this one is settled
        with self._cond:
            lane.busy -= 1
            if lane is not self.long:
                left = self._rendering.pop(job.org_id) - 1
                if left:
                    self._rendering[job.org_id] = left
        self._dispatch()
        try:
            if rendered is None:
                self.finalize_failure(
                    job.generation_id, "provider_error", "Rendering the output failed."
                )
            else:
                self.finalize_success(job, rendered)
        except Exception:
            log.exception("settling %s failed", job.generation_id)

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


def _take_turn(waiting: dict[str, deque[Job]], org: str | None) -> Job | None:
    """``org``'s oldest job from ``waiting``; the organization goes to the back of the line."""
    if org is None:
        return None
    queue = waiting.pop(org)
    job = queue.popleft()
    if queue:
        waiting[org] = queue
    return job


def asset_path(data_dir: Path, asset_id: str, extension: str) -> str:
    return str(data_dir / "assets" / f"{asset_id}{extension}")

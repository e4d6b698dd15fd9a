"""The request journal: an append-only JSON Lines file of what this machine submitted.

The API's generation does not echo the request (tier, duration asked for, references, the
estimate shown), and a kernel restart forgets which jobs were in flight. So the client appends
one record per event of a submit:

- ``attempt``   before sending (no generation id yet; the idempotency key links it),
- ``submitted`` after the service answered (generation id, status ``pending``),
- ``finished``  when the client saw the generation terminal (status, ``credits_charged``),
- ``unanswered`` when the submit ended without an answer (connection lost, 5xx, interrupt):
  the service may have created and charged the job. Such an attempt (or one whose process
  died before it could say) is listed by ``pending()``, looked up by
  ``client.generations.recover()``, and *claimed* by an identical re-send, which reuses its
  idempotency key so the service returns the original job instead of charging again.
- ``absent``    when ``recover()`` listed everything since such an attempt, well after it, and
  the service had no job with its key: it never arrived, and is no longer looked for.

Each record: ``v, event, at, service, key_id, kind, model, mode, idempotency_key,
generation_id, request, summary, estimate, status, credits_charged, pid, host, inputs``.
``request`` is the body sent, without secrets; ``key_id`` is a hash prefix of the API key,
never the key; ``pid``/``host`` name an attempt's process; ``inputs`` is a digest of a request
with local files as given.
``mediagen.history`` joins these records onto the API's rows; ``client.generations.resume()``
re-attaches to the pending ones. Writes are single ``O_APPEND`` writes under a lock (and an
advisory file lock between processes), so lines never interleave. A crash mid-write can leave
a torn last line: the next append starts on a fresh line, so the torn bytes never swallow a
record, and readers skip them (or, in a file written before that rule, recover the record that
was glued onto them).

The journal stays small: now and then (``mediagen.local._compaction``) the generations that
finished long ago are folded, one merged record each, into the settled file beside it
(``journal.settled.jsonl``), and the journal is replaced atomically by what is left. Readers of
records (``records()``, ``latest()``, the history, the gallery, the forecasts) read the settled
file first; the open attempts a submit looks at live only in the journal.
"""

from __future__ import annotations

import bisect
import contextlib
import datetime as dt
import hashlib
import heapq
import json
import os
import socket
import threading
from array import array
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mediagen.local._files import process_gone

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the in-process lock only
    fcntl = None  # type: ignore[assignment]

VERSION = 1
EVENTS = ("attempt", "submitted", "finished", "unanswered", "absent")
_RECORD_START = b'{"v":'

#: request fields copied into ``summary`` (history columns)
SUMMARY_FIELDS = (
    "tier",
    "resolution",
    "quality",
    "variant",
    "duration_seconds",
    "generate_image_count",
    "sample_count",
    "aspect_ratio",
)
REFERENCE_FIELDS = (
    "reference_images",
    "reference_videos",
    "reference_audios",
    "element_images",
    "keyframes",
    "first_frame",
    "last_frame",
    "reference_image",
    "source_video",
    "audio",
    "face_image",
    "character_image",
    "motion_video",
    "mask_image",
)
_SECRET_WORDS = ("api_key", "apikey", "authorization", "password", "secret", "token")


def utc_now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def scrub(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """A JSON value with secret-looking fields dropped and any known secret masked."""
    if isinstance(value, Mapping):
        return {
            str(k): scrub(v, secrets)
            for k, v in value.items()
            if not any(word in str(k).lower() for word in _SECRET_WORDS)
        }
    if isinstance(value, (list, tuple)):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str):
        for secret in secrets:
            if secret and secret in value:
                value = value.replace(secret, "***")
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)


def summarize(request: Mapping[str, Any]) -> dict[str, Any]:
    """The priced settings of a request and how many references of each kind it had."""
    summary = {k: request[k] for k in SUMMARY_FIELDS if request.get(k) is not None}
    counts: dict[str, int] = {}
    for name in REFERENCE_FIELDS:
        value = request.get(name)
        if value is None:
            continue
        counts[name] = len(value) if isinstance(value, list) else 1
    if counts:
        summary["reference_counts"] = counts
    return summary


def make_record(
    event: str,
    *,
    service: str,
    key_id: str,
    kind: str | None,
    request: Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
    generation: Any = None,
    estimate: Mapping[str, Any] | None = None,
    secrets: tuple[str, ...] = (),
    inputs: str | None = None,
) -> dict[str, Any]:
    """One journal record (``generation``: a Generation model or its JSON dict)."""
    if event not in EVENTS:
        raise ValueError(f"event must be one of {EVENTS}")
    request = dict(request or {})
    body = {k: v for k, v in request.items() if k != "idempotency_key"}

    def gen_field(name: str) -> Any:
        if generation is None:
            return None
        if isinstance(generation, Mapping):
            return generation.get(name)
        return getattr(generation, name, None)

    return {
        "v": VERSION,
        "event": event,
        "at": utc_now_iso(),
        "service": service,
        "key_id": key_id,
        "kind": kind or gen_field("type"),
        "model": request.get("model") or gen_field("model"),
        "mode": request.get("mode") or gen_field("mode"),
        "idempotency_key": idempotency_key or gen_field("idempotency_key"),
        "generation_id": gen_field("id"),
        "request": scrub(body, secrets) if event != "finished" else {},
        "summary": summarize(body) if event != "finished" else {},
        "estimate": dict(estimate) if estimate else None,
        "status": gen_field("status"),
        "credits_charged": gen_field("credits_charged"),
        # who sent it: an attempt whose process is gone can no longer be answered
        "pid": os.getpid() if event == "attempt" else None,
        "host": socket.gethostname() if event == "attempt" else None,
        # a digest of the request as given, when local files were uploaded for it
        "inputs": inputs,
    }


def canonical(request: Any) -> str:
    """A request body as comparable text (what "an identical request" means)."""
    return json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)


def settled_path(path: Path) -> Path:
    """The file beside a journal that holds its folded, settled generations."""
    return path.with_name(f"{path.stem}.settled{path.suffix or '.jsonl'}")


def _file_id(stat: os.stat_result) -> tuple[int, int]:
    return (stat.st_dev, stat.st_ino)


def _writer_gone(record: Mapping[str, Any]) -> bool:
    """True when the attempt's process (on this machine) is no longer running."""
    pid = record.get("pid")
    if not isinstance(pid, int) or record.get("host") != socket.gethostname():
        return False
    return process_gone(pid)


class Journal:
    """An append-only JSONL file (created on the first write)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        #: ``_finished_mark`` of each generation journaled finished (read on first use)
        self._finished: _Marks | None = None
        self._index_lock = threading.Lock()
        self._index_offset = 0
        self._index_file: tuple[int, int] | None = None
        self._index: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"

    @contextmanager
    def _locked(self) -> Iterator[int]:
        """This process's lock and the file's advisory lock; yields an append descriptor."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                if self._still_the_journal(fd):
                    break
                os.close(fd)  # compacted (replaced) while waiting for the lock: open the new one
            try:
                yield fd
            finally:
                os.close(fd)  # releases the flock too

    def _still_the_journal(self, fd: int) -> bool:
        try:
            return _file_id(os.stat(self.path)) == _file_id(os.fstat(fd))
        except FileNotFoundError:
            return False

    def append(self, record: Mapping[str, Any]) -> None:
        with self._locked() as fd:
            self._append(fd, record)

    def _append(self, fd: int, record: Mapping[str, Any]) -> None:
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # the last write was torn by a crash: never glue onto it
        os.write(fd, line)
        finished = record.get("event") == "finished" and record.get("generation_id")
        if finished and self._finished is not None:
            self._finished.add(_finished_mark(record["generation_id"]))

    def records(self) -> list[dict[str, Any]]:
        """Every readable record, oldest first."""
        return list(self.iter_records())

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """Every readable record, oldest first: the settled file's, then the journal's."""
        yield from read_records(settled_path(self.path))
        yield from read_records(self.path)

    def is_finished(self, generation_id: str) -> bool:
        with self._lock:
            if self._finished is None:
                self._finished = _Marks(
                    _finished_mark(r["generation_id"])
                    for r in self.iter_records()
                    if r.get("event") == "finished" and r.get("generation_id")
                )
            return _finished_mark(generation_id) in self._finished

    def latest(
        self, *, service: str | None = None, key_id: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Per generation id, its records merged (later non-null values win)."""
        merged: dict[str, dict[str, Any]] = {}
        by_key: dict[str, dict[str, Any]] = {}
        for record in self.iter_records():
            if service is not None and record.get("service") != service:
                continue
            if key_id is not None and record.get("key_id") != key_id:
                continue
            fields = {k: v for k, v in record.items() if v not in (None, {}, [])}
            gid = record.get("generation_id")
            ikey = record.get("idempotency_key")
            if gid:
                base = merged.setdefault(gid, dict(by_key.get(ikey, {})) if ikey else {})
                base.update(fields)
            elif ikey:
                by_key.setdefault(ikey, {}).update(fields)
        return merged

    def pending(
        self, *, service: str | None = None, key_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Merged records of generations last seen ``pending`` (oldest first)."""
        found = [
            r
            for r in self.latest(service=service, key_id=key_id).values()
            if r.get("event") != "finished" and r.get("status") not in ("completed", "failed")
        ]
        return found

    def unanswered(
        self, *, service: str | None = None, key_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Attempts that can no longer be answered, oldest first.

        An attempt counts when its idempotency key's last record says ``unanswered``, or when it
        is still the last record but the process that wrote it is gone (it crashed or was
        killed mid-submit). Attempts still in flight in a live process do not count.
        """
        found = []
        for attempt, last in self._open_attempts():
            if service is not None and attempt.get("service") != service:
                continue
            if key_id is not None and attempt.get("key_id") != key_id:
                continue
            event = last.get("event")
            if event == "unanswered" or (event == "attempt" and _writer_gone(last)):
                found.append({**attempt, "event": "unanswered"})
        return found

    def _open_attempts(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(attempt, latest record) per idempotency key not answered yet, oldest first.

        Kept up to date by reading only what was appended since the last call (the file is
        append-only), so a submit does not re-read a long journal.
        """
        with self._index_lock:
            try:
                handle = open(self.path, "rb")  # noqa: SIM115 (closed below)
            except FileNotFoundError:
                handle = None
            with handle or contextlib.nullcontext():
                stat = os.fstat(handle.fileno()) if handle is not None else None
                size = stat.st_size if stat is not None else 0
                file_id = _file_id(stat) if stat is not None else None
                if size < self._index_offset or file_id != self._index_file:  # compacted
                    self._index_offset, self._index, self._index_file = 0, {}, file_id
                if handle is not None and size > self._index_offset:
                    handle.seek(self._index_offset)
                    data = handle.read(size - self._index_offset)
                    complete = data.rfind(b"\n") + 1  # a torn tail is read once it is followed
                    for raw in data[:complete].split(b"\n"):
                        record = _parse_line(raw) if raw else None
                        if record is not None:
                            self._index_record(record)
                    self._index_offset += complete
            return list(self._index.values())

    def _index_record(self, record: dict[str, Any]) -> None:
        ikey = record.get("idempotency_key")
        if not ikey:
            return
        event = record.get("event")
        if event == "attempt":
            self._index.pop(ikey, None)
            self._index[ikey] = (record, record)
        elif event == "unanswered" and ikey in self._index:
            attempt = self._index.pop(ikey)[0]
            self._index[ikey] = (attempt, record)
        else:  # answered: submitted or finished
            self._index.pop(ikey, None)

    def claim_or_append(self, record: Mapping[str, Any]) -> str | None:
        """Journal the ``attempt`` record; if an identical request (same API key, kind and body)
        is unanswered, take over its idempotency key instead and return it.

        The key (``key_id``, its fingerprint) names the account; the base URL's spelling does
        not (``127.0.0.1`` or ``localhost``, a proxy or direct reach the same service), so it
        is not compared: a re-send through another URL still finds the lost attempt.

        Atomic (across threads and processes): one unanswered attempt is claimed by one
        re-send only, so n identical requests sent on purpose still make n jobs.
        """
        with self._locked() as fd:
            wanted = canonical(record.get("request"))
            claimed = None
            for old in self.unanswered(key_id=record.get("key_id")):
                if old.get("kind") != record.get("kind"):
                    continue
                if record.get("inputs"):  # local files: the request as given, not as sent
                    same = old.get("inputs") == record["inputs"]
                else:
                    same = canonical(old.get("request")) == wanted
                if same:
                    claimed = old["idempotency_key"]
                    break
            if claimed is not None:
                record = {**record, "idempotency_key": claimed}
            self._append(fd, record)
            return claimed


def _finished_mark(generation_id: str) -> int:
    """What ``Journal.is_finished`` remembers of a generation id: 8 bytes of its BLAKE2b digest
    (a long table finishes one generation per row, and a process remembers each). Two ids
    share a mark about once in 2**64 pairs; a shared mark would only leave the later one's
    ``finished`` record unwritten."""
    digest = hashlib.blake2b(str(generation_id).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class _Marks:
    """A set of 64-bit marks in about 8 bytes each (a set of ints takes some 80): a sorted
    array, and the newest few in a set that is merged into it once it holds an eighth as many
    (so adding costs O(1) amortized, looking up O(log n))."""

    #: the newest marks kept in the set before a merge, at least
    RECENT = 1024

    def __init__(self, marks: Iterable[int] = ()) -> None:
        self._sorted = array("Q", sorted(set(marks)))
        self._recent: set[int] = set()

    def __contains__(self, mark: int) -> bool:
        if mark in self._recent:
            return True
        at = bisect.bisect_left(self._sorted, mark)
        return at < len(self._sorted) and self._sorted[at] == mark

    def __len__(self) -> int:
        return len(self._sorted) + len(self._recent)

    def add(self, mark: int) -> None:
        if mark in self:
            return
        self._recent.add(mark)
        if len(self._recent) >= max(self.RECENT, len(self._sorted) // 8):
            self._sorted = array("Q", heapq.merge(self._sorted, sorted(self._recent)))
            self._recent.clear()


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The readable records of one JSON Lines file, in order (none if it does not exist)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        return
    with handle:
        for raw in handle:
            record = _parse_line(raw)
            if record is not None:
                yield record


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    """One record from a line; torn bytes are skipped, and a record glued onto them (a file
    written before appends started on a fresh line) is recovered."""
    try:
        record = json.loads(raw)
    except ValueError:
        start = raw.rfind(_RECORD_START)
        if start <= 0:
            return None
        try:
            record = json.loads(raw[start:])
        except ValueError:
            return None
    return record if isinstance(record, dict) else None

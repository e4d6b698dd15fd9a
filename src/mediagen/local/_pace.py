"""The pace of one key, kept where every process of this user on this machine can share it.

The service puts one rate limit on each key, so the processes that use a key (a notebook, a
script, the workers of a local Dask cluster, the Python workers of a Spark executor) have one
budget between them: each learning the limit alone would send as many times the limit as there
are processes and meet the 429s each alone. So the gate of a key keeps its state -- the pace it
learned, the next free slot, the 429 it is held by, what the service accepted lately -- in a
small file of fixed layout, read and written under ``fcntl.flock`` for each decision (a few
microseconds; a table run makes tens of requests a second, not millions).

The file is named by the key's fingerprint and a hash of the service's URL, never by the key,
and holds only numbers; it lives in a directory of the user's own (``$XDG_RUNTIME_DIR``, or a
``mediagen-<uid>`` directory of mode 0700 in the temporary directory, or
``MEDIAGEN_RUNTIME_DIR``). It stays when the processes end, so the next run of the key starts
from the pace the last one learned instead of meeting the limit again. Where no such directory
can be had (or ``MEDIAGEN_SHARED_PACE=0``), each process keeps its state in memory, as before.

Times in the file are the wall clock (``time.time``): the monotonic clock of one boot means
nothing to the next run. A state last written long ago keeps only its learned pace.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import stat
import struct
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path

log = logging.getLogger("mediagen")

ENV_RUNTIME_DIR = "MEDIAGEN_RUNTIME_DIR"
ENV_SHARED = "MEDIAGEN_SHARED_PACE"

#: how many buckets of accepted requests the state counts (each ``BUCKET`` seconds long)
BUCKETS = 12
BUCKET = 0.5


#: ``cut_at`` of a key whose pace no 429 has cut yet
NEVER = -1e9


@dataclass
class PaceState:
    """What a key's gate decides from (times on the gate's clock)."""

    #: the pace learned from 429s, requests per second (None: no 429 seen, nothing held to)
    learned: float | None = None
    blocked_until: float = 0.0
    release_next: float = 0.0
    next_slot: float = 0.0
    cut_at: float = NEVER
    grown_at: float = 0.0
    held_at: float = NEVER
    #: how many 429s so far: a request held by one re-checks after a new one
    penalties: int = 0
    #: requests answered (not 429) per ``BUCKET``: start of each bucket, and its count
    starts: list[float] = field(default_factory=lambda: [0.0] * BUCKETS)
    counts: list[float] = field(default_factory=lambda: [0.0] * BUCKETS)

    def count_answer(self, now: float) -> None:
        start = math.floor(now / BUCKET) * BUCKET
        slot = math.floor(now / BUCKET) % BUCKETS
        if self.starts[slot] != start:
            self.starts[slot], self.counts[slot] = start, 0.0
        self.counts[slot] += 1

    def accepted_rate(self, now: float, window: float) -> float:
        """Requests answered per second over the last ``window`` seconds, spread over at least
        one second, counting back only while the key was in use: a lull of more than a
        ``BUCKET`` (a table priced, then its run started) is not read as a slow service."""
        kept = sorted(
            ((s, c) for s, c in zip(self.starts, self.counts, strict=True) if c),
            reverse=True,
        )
        total, earliest = 0.0, None
        for start, count in kept:
            if not now - window <= start <= now:
                continue
            if earliest is not None and earliest - start > 2 * BUCKET:
                break
            total, earliest = total + count, start
        if earliest is None:
            return 0.0
        return total / max(1.0, now - earliest)


_FIELDS = [f.name for f in fields(PaceState) if f.name not in ("starts", "counts")]
#: magic, version, written at (wall clock), the scalar fields, then the buckets
_LAYOUT = struct.Struct(f"<4sId{len(_FIELDS)}d{2 * BUCKETS}d")
_MAGIC = b"MGPC"
_VERSION = 1
#: a state not written for this long keeps only its learned pace (the rest is of another run)
STALE = 120.0
#: a state written this far ahead of the clock is of a clock since set back: its slots and
#: holds would hold every request for as long
JUMP = 5.0


def _pack(state: PaceState, written: float) -> bytes:
    values = [getattr(state, name) for name in _FIELDS]
    values[_FIELDS.index("learned")] = -1.0 if state.learned is None else state.learned
    return _LAYOUT.pack(_MAGIC, _VERSION, written, *values, *state.starts, *state.counts)


def _unpack(data: bytes, now: float) -> PaceState:
    """The state in ``data``; a fresh one for anything short, foreign or torn."""
    if len(data) != _LAYOUT.size:
        return PaceState()
    magic, version, written, *values = _LAYOUT.unpack(data)
    if magic != _MAGIC or version != _VERSION or not all(map(math.isfinite, values)):
        return PaceState()
    scalars = dict(zip(_FIELDS, values[: len(_FIELDS)], strict=True))
    learned = scalars.pop("learned")
    learned = learned if learned > 0 else None
    if not -JUMP <= now - written <= STALE:  # another run's, or a clock that jumped back
        return PaceState(learned=learned)
    rest = values[len(_FIELDS) :]
    return PaceState(
        learned=learned,
        blocked_until=scalars["blocked_until"],
        release_next=scalars["release_next"],
        next_slot=scalars["next_slot"],
        cut_at=scalars["cut_at"],
        grown_at=scalars["grown_at"],
        held_at=scalars["held_at"],
        penalties=int(scalars["penalties"]),
        starts=list(rest[:BUCKETS]),
        counts=list(rest[BUCKETS:]),
    )


class LocalPace:
    """A key's state in this process only (tests, and machines without a shared place)."""

    shared = False

    def __init__(self) -> None:
        self._state = PaceState()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def locked(self, clock: Callable[[], float]) -> Iterator[PaceState]:
        """The state, this process's threads kept apart (the caller reads its clock inside)."""
        with self._lock:
            yield self._state


class SharedPace:
    """A key's state in a file every process of this user on this machine opens: each
    decision reads it, changes it and writes it back under an exclusive ``flock``.

    A thread lock comes first: threads share the file's open description, and ``flock`` on
    it would not keep two of them apart. A forked child opens the file again for the same
    reason (it inherits its parent's description)."""

    shared = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid = 0

    def _open(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd, self._pid = os.open(self.path, flags, 0o600), os.getpid()
        return self._fd

    @contextlib.contextmanager
    def locked(self, clock: Callable[[], float]) -> Iterator[PaceState]:
        """The state, every thread and process of the key kept apart; written back when the
        block ends without an exception. The caller reads ``clock`` inside the block: a time
        read before the lock was had could be older than what another wrote meanwhile."""
        import fcntl

        with self._lock:
            fd = self._open()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                state = _unpack(os.pread(fd, _LAYOUT.size, 0), clock())
                yield state
                os.pwrite(fd, _pack(state, clock()), 0)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def read(self, clock: Callable[[], float] = time.time) -> PaceState:
        """The state as it is (a copy: changing it changes nothing)."""
        with self.locked(clock) as state:
            return PaceState(**{f.name: getattr(state, f.name) for f in fields(PaceState)})

    def close(self) -> None:
        with self._lock:
            if self._fd is not None and self._pid == os.getpid():
                os.close(self._fd)
            self._fd = None


def runtime_dir() -> Path | None:
    """This user's directory for state shared between processes (made if missing), or None
    when there is none to be had: not writable, or one another user could write to."""
    explicit = os.environ.get(ENV_RUNTIME_DIR)
    if explicit:
        base = Path(explicit).expanduser()
    elif os.environ.get("XDG_RUNTIME_DIR"):
        base = Path(os.environ["XDG_RUNTIME_DIR"]) / "mediagen"
    else:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        base = Path(tempfile.gettempdir()) / f"mediagen-{uid}"
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = base.stat()
    except OSError:
        return None
    if hasattr(os, "getuid") and (info.st_uid != os.getuid() or info.st_mode & 0o022):
        return None  # someone else's, or open to others: its state could be forged
    if not stat.S_ISDIR(info.st_mode):
        return None
    return base


#: a key's pace not used for this long is forgotten (its file removed): keys come and go
KEEP_DAYS = 7.0
_pruned: set[Path] = set()


def _prune(base: Path) -> None:
    """Remove the pace files of keys not used for ``KEEP_DAYS`` (once per directory and
    process: a test suite or a team makes a key a day, and each leaves a file)."""
    if base in _pruned:
        return
    _pruned.add(base)
    cutoff = time.time() - KEEP_DAYS * 86400
    for path in base.glob("pace-*"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()


_GROUPS: dict[Path | None, str] = {}


def _sharing_off() -> bool:
    return os.environ.get(ENV_SHARED, "").strip().lower() in ("0", "false", "no", "off")


def machine_group() -> str:
    """A token the processes sharing this machine's pace files have in common (and no other):
    a random id kept in the runtime directory; a process without one is a group alone."""
    base = None if _sharing_off() else runtime_dir()
    if base in _GROUPS:
        return _GROUPS[base]
    token = uuid.uuid4().hex
    if base is not None:
        path, temp = base / "group", base / f".group-{token}"
        with contextlib.suppress(OSError):
            temp.write_text(token)
            # a link appears whole or not at all: the first process's token is everyone's
            with contextlib.suppress(FileExistsError):
                os.link(temp, path)
            temp.unlink()
            found = path.read_text().strip()
            token = found if len(found) == 32 else token
    return _GROUPS.setdefault(base, token)


def pace_file_name(base_url: str, key_fingerprint: str) -> str:
    """The file of one (service, key): the key's fingerprint and a hash of the URL."""
    url = hashlib.sha256(base_url.encode()).hexdigest()[:12]
    return f"pace-{key_fingerprint}-{url}"


def pace_store(base_url: str, key_fingerprint: str) -> LocalPace | SharedPace:
    """The shared state of (service, key) on this machine, or one of this process alone."""
    if _sharing_off():
        return LocalPace()
    try:
        import fcntl  # noqa: F401  (POSIX only)
    except ImportError:
        return LocalPace()
    base = runtime_dir()
    if base is None:
        log.debug("mediagen: no private runtime directory; the key's pace is this process's")
        return LocalPace()
    _prune(base)
    store = SharedPace(base / pace_file_name(base_url, key_fingerprint))
    try:
        store._open()
    except OSError:
        return LocalPace()
    return store

"""Keeping the request journal small: old finished generations are folded into its settled file.

The journal gains a few lines per submit and is read whole by ``pending()``, the history join
and the forecasts, so without care it only grows. Compaction keeps in the journal every record
of a generation that is not finished (pending, or a submit whose answer never came: those are
what recovery needs) and every generation that finished within ``keep_days``; each generation
that finished earlier becomes one merged record (later non-null values win, as ``latest()``
merges; with ``submitted_at`` for the forecasts) appended to the settled file beside the
journal (``journal.settled.jsonl``), which the readers of records read first. A submit whose
answer was lost stays, whatever its age, until ``recover()`` finds it or finds it ``absent``
(never received: then it goes when that is old too).

Crash-safe, in this order, under the journal's lock (no append can slip in between):

1. the folded records are appended to the settled file and flushed to disk (a generation
   already there, from a compaction killed before step 2, is not added again);
2. what stays is written to a temporary file beside the journal, flushed, and renamed over
   the journal (atomic: a reader sees the old file or the new one, never a mix).

A kill at any moment leaves either the old journal (plus, at worst, folded copies that merge
with the records they came from) or the new one with everything folded in the settled file:
no record is lost. Appenders that were waiting for the lock see the journal was replaced and
open the new one (``Journal._locked``).

It runs rarely and off the hot path: :func:`compact_soon` (called when a client opens its
journal) only looks at the file's size, and past ``COMPACT_ABOVE_BYTES`` starts one background
thread, at most once per journal and process.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mediagen.local._files import append_durable, leftovers, write_atomic
from mediagen.local._journal import Journal, read_records, settled_path

log = logging.getLogger("mediagen")

#: finished generations stay in the journal this long (``Client(journal_keep_days=...)``)
DEFAULT_KEEP_DAYS = 30.0
#: a journal smaller than this is left alone (about a thousand submits)
COMPACT_ABOVE_BYTES = 2 * 1024 * 1024

_started: set[Path] = set()
_started_lock = threading.Lock()


@dataclass(frozen=True)
class Compaction:
    """What one compaction did: generations folded, records kept, the journal's size before
    and after (bytes), and the settled file's size after."""

    folded: int
    kept: int
    bytes_before: int
    bytes_after: int
    settled_bytes: int


def compact_soon(
    journal: Journal | None,
    keep_days: float = DEFAULT_KEEP_DAYS,
    above_bytes: int = COMPACT_ABOVE_BYTES,
) -> threading.Thread | None:
    """Compact ``journal`` on a background thread if it is larger than ``above_bytes`` and was
    not compacted (or started) by this process yet; the thread, or None. One ``stat``."""
    if journal is None:
        return None
    try:
        size = journal.path.stat().st_size
    except OSError:
        return None
    if size <= above_bytes:
        return None
    with _started_lock:
        if journal.path in _started:
            return None
        _started.add(journal.path)
    thread = threading.Thread(
        target=_compact_quietly, args=(journal, keep_days), name="mediagen-journal", daemon=True
    )
    thread.start()
    return thread


def _compact_quietly(journal: Journal, keep_days: float) -> None:
    try:
        done = compact(journal, keep_days)
    except Exception as exc:  # a journal that cannot be compacted still works as it is
        log.warning("mediagen: the request journal was not compacted: %s", exc)
        return
    log.info("mediagen: journal compacted: %s", done)


def compact(
    journal: Journal, keep_days: float = DEFAULT_KEEP_DAYS, now: dt.datetime | None = None
) -> Compaction:
    """Fold the generations that finished more than ``keep_days`` before ``now`` into the
    settled file; everything else stays in the journal (see the module docstring)."""
    if keep_days < 0:
        raise ValueError(f"keep_days must be >= 0, not {keep_days!r}")
    now = now or dt.datetime.now(dt.timezone.utc)
    cutoff = now - dt.timedelta(days=keep_days)
    settled = settled_path(journal.path)
    with journal._locked() as fd:
        _remove_stale_temporaries(journal.path)
        before = os.fstat(fd).st_size
        records = list(read_records(journal.path))
        groups = _groups(records)
        finished = [g for g in groups if _ended_before(g, records, cutoff, "finished")]
        absent = [g for g in groups if _ended_before(g, records, cutoff, "absent")]
        gone = {i for group in finished + absent for i in group}
        if not gone:
            return Compaction(0, len(records), before, before, _size(settled))
        already = {r.get("generation_id") for r in read_records(settled)}
        merged = [_fold([records[i] for i in group]) for group in finished]
        append_durable(
            settled, _lines([r for r in merged if r.get("generation_id") not in already])
        )
        kept = [r for i, r in enumerate(records) if i not in gone]
        write_atomic(journal.path, _lines(kept), durable=True)
        return Compaction(len(merged), len(kept), before, _size(journal.path), _size(settled))


def _groups(records: list[dict[str, Any]]) -> list[list[int]]:
    """Record indexes per submit: linked by generation id or idempotency key (an attempt has
    only the key, a finished record may have only the id), in order."""
    parent = list(range(len(records)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, record in enumerate(records):
        for name in ("generation_id", "idempotency_key"):
            value = record.get(name)
            if not value:
                continue
            seen = first.setdefault((name, str(value)), i)
            parent[root(i)] = root(seen)
    groups: dict[int, list[int]] = {}
    for i in range(len(records)):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def _ended_before(
    group: list[int], records: list[dict[str, Any]], cutoff: dt.datetime, event: str
) -> bool:
    """The submit's last record is ``event`` and older than ``cutoff``: a generation that
    ``finished`` (folded into the settled file), or an unanswered attempt that ``recover()``
    found ``absent`` (it never reached the service: dropped, as nothing refers to it)."""
    last = records[group[-1]]
    if last.get("event") != event:
        return False
    if event == "finished" and not last.get("generation_id"):
        return False
    ended_at = _instant(last.get("at"))
    return ended_at is not None and ended_at < cutoff


def _fold(group: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """One record for a finished generation: its records merged, later non-null values
    winning (as ``Journal.latest()`` merges), plus when it was submitted (the forecasts')."""
    merged: dict[str, Any] = {}
    submitted_at = None
    for record in group:
        if record.get("event") == "submitted" and submitted_at is None:
            submitted_at = record.get("at")
        merged.update({k: v for k, v in record.items() if v not in (None, {}, [])})
    merged["event"] = "finished"
    if submitted_at is not None:
        merged["submitted_at"] = submitted_at
    return merged


def _instant(text: Any) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.timezone.utc)


def _lines(records: Iterable[Mapping[str, Any]]) -> bytes:
    return b"".join(
        (json.dumps(r, separators=(",", ":"), default=str) + "\n").encode() for r in records
    )


def _remove_stale_temporaries(path: Path) -> None:
    """The temporary files of compactions killed before their rename (under the lock, so none
    is in use)."""
    for stale in leftovers(path.parent, path.name):
        stale.unlink(missing_ok=True)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0

"""The spend limit's file: what each submit reserved, and each refund, one JSON line each.

A ``SpendLimit`` outlives the kernel because its reservations live here, in one small file
that every process of the machine's user appends to under an advisory lock. The file is
money: a line that would open the limit fails closed (see :func:`read_entries`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def locked(path: Path) -> Iterator[Any]:
    """The limit's file, opened for reading and appending, locked against other processes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: one process at a time is all the lock can promise
            yield handle
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield handle
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_entries(handle: Any) -> list[tuple[float, float]]:
    """The file's reservations and releases, as (time, credits).

    A line that is not JSON is torn by a crash mid-write: it reserved nothing that was sent,
    and is skipped. Any other line must be one this class wrote: a time, and a finite number of
    credits that is a reservation (>= 0) or the release of an earlier reservation of the same
    amount. Anything else (``NaN``, ``Infinity``, ``-1e9``, a string) would open the limit, so
    it raises ValueError naming the file, the line and the value: the limit fails closed.
    """
    handle.seek(0)
    entries: list[tuple[float, float]] = []
    unreleased: dict[float, int] = {}
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        when, credits = _ledger_line(record, handle, number)
        if credits < 0:
            if not unreleased.get(-credits):
                raise _poisoned(handle, number, record, "releases nothing reserved before it")
            unreleased[-credits] -= 1
        elif credits > 0:
            unreleased[credits] = unreleased.get(credits, 0) + 1
        entries.append((when, credits))
    return entries


def _ledger_line(record: Any, handle: Any, number: int) -> tuple[float, float]:
    if not isinstance(record, dict):
        raise _poisoned(handle, number, record, "is not a spend record")
    values = record.get("t"), record.get("credits")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        raise _poisoned(handle, number, record, "is not a spend record")
    when, credits = float(values[0]), float(values[1])  # type: ignore[arg-type]
    if not (math.isfinite(when) and math.isfinite(credits)):
        raise _poisoned(handle, number, record, "is not a finite number of credits")
    return when, credits


def _poisoned(handle: Any, number: int, record: Any, why: str) -> ValueError:
    return ValueError(
        f"the spend limit's file {getattr(handle, 'name', '?')}, line {number}, {why}: "
        f"{json.dumps(record)[:200]}; nothing is sent until it is fixed or removed"
    )


def append_entry(handle: Any, when: float, credits: float) -> None:
    handle.seek(0, os.SEEK_END)
    handle.write("\n" + json.dumps({"t": when, "credits": credits}) + "\n")
    handle.flush()
    os.fsync(handle.fileno())

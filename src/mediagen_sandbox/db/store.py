"""The database file: one connection per thread, write and read transactions.

WAL mode lets readers run while one writer commits; every write goes through
:meth:`Store.write`, which opens ``BEGIN IMMEDIATE`` so a read-then-write (check the balance,
then reserve) can never interleave with another writer. Credits are stored as integer cents so
the ledger invariant (available + reserved + charged = granted) holds exactly.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from ..units import iso, parse_iso, utcnow
from .schema import migrate


class Store:
    """The database file plus a per-thread connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._last_created = ""
        self._created_lock = threading.Lock()
        migrate(self.conn())

    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error."""
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the database at one moment (WAL keeps
        that view while writers go on), so figures read together always agree."""
        conn = self.conn()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def query_one(self, sql: str, params: tuple = ()) -> sqlite3.Row | None:
        return self.conn().execute(sql, params).fetchone()

    def query_all(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        return self.conn().execute(sql, params).fetchall()

    def next_created_at(self, conn: sqlite3.Connection) -> str:
        """A creation time strictly later than every generation's (keyset cursors rely on it).

        Called inside a write transaction, so it also sees rows written before a restart.
        """
        with self._created_lock:
            if not self._last_created:
                row = conn.execute("SELECT MAX(created_at) FROM generations").fetchone()
                self._last_created = row[0] or ""
            now = iso(utcnow())
            if now <= self._last_created:
                last = parse_iso(self._last_created)
                now = iso(last + timedelta(microseconds=1))
            self._last_created = now
            return now

    def forget_last_created(self) -> None:
        """Re-read the newest creation time (after rows were inserted with chosen times)."""
        with self._created_lock:
            self._last_created = ""

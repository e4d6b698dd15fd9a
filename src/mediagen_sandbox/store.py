"""SQLite store in the data directory: schema, one connection per thread, write transactions.

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
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS orgs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  plan TEXT NOT NULL,
  discount_percent REAL NOT NULL DEFAULT 0,
  granted INTEGER NOT NULL DEFAULT 0,
  available INTEGER NOT NULL DEFAULT 0,
  reserved INTEGER NOT NULL DEFAULT 0,
  charged INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS members (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  cap INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS members_org ON members(org_id);
CREATE TABLE IF NOT EXISTS member_usage (
  member_id TEXT NOT NULL,
  cycle TEXT NOT NULL,
  used INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (member_id, cycle)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  member_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS generations (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  member_id TEXT NOT NULL,
  key_id TEXT,
  type TEXT NOT NULL,
  model TEXT NOT NULL,
  mode TEXT,
  status TEXT NOT NULL,
  prompt TEXT NOT NULL,
  created_at TEXT NOT NULL,
  completed_at TEXT,
  credits_reserved INTEGER NOT NULL,
  credits_charged INTEGER,
  error_code TEXT,
  error_message TEXT,
  idempotency_key TEXT,
  cycle TEXT NOT NULL,
  job_json TEXT,
  outputs_json TEXT,
  result_meta_json TEXT
);
CREATE INDEX IF NOT EXISTS gen_member_created ON generations(member_id, created_at, id);
CREATE INDEX IF NOT EXISTS gen_member_status_created
  ON generations(member_id, status, created_at, id);
CREATE INDEX IF NOT EXISTS gen_pending ON generations(status) WHERE status = 'pending';
CREATE TABLE IF NOT EXISTS idempotency (
  org_id TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  generation_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (org_id, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  member_id TEXT,
  generation_id TEXT,
  kind TEXT NOT NULL,
  amount INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  note TEXT
);
CREATE INDEX IF NOT EXISTS ledger_org ON ledger(org_id, seq);
CREATE TABLE IF NOT EXISTS assets (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  member_id TEXT,
  media TEXT NOT NULL,
  content_type TEXT NOT NULL,
  filename TEXT NOT NULL,
  size_bytes INTEGER,
  status TEXT NOT NULL,
  path TEXT,
  width INTEGER,
  height INTEGER,
  duration_seconds REAL,
  source TEXT NOT NULL,
  generation_id TEXT,
  created_at TEXT NOT NULL
);
"""


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso(dt: datetime) -> str:
    """Fixed-width UTC timestamp (four-digit year even before 1000): sorts in time order."""
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """An ISO 8601 date-time in UTC (naive means UTC). ``ValueError`` for anything else,
    including an offset that moves it outside years 1 to 9999."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(f"{text!r} is outside the years 1 to 9999 in UTC") from None


def billing_cycle(dt: datetime) -> str:
    """Member caps reset with calendar months (UTC)."""
    return dt.strftime("%Y-%m")


def cycle_reset_at(cycle: str) -> str:
    year, month = (int(p) for p in cycle.split("-"))
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01T00:00:00Z"


def to_cents(credits: float | int | str | Decimal) -> int:
    return int((Decimal(str(credits)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def to_credits(cents: int) -> float:
    return cents / 100


class Store:
    """The database file plus a per-thread connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._last_created = ""
        self._created_lock = threading.Lock()
        conn = self.conn()
        conn.executescript(SCHEMA)

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

    def get_meta(self, key: str) -> str | None:
        row = self.query_one("SELECT value FROM meta WHERE key = ?", (key,))
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.write() as conn:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

"""The database's layout and how a data directory from an earlier release is brought up to it.

SQLite's ``user_version`` holds the schema version of a data directory. Opening applies, in
order and each in its own transaction, every migration above that version, so a user's
sandbox data from this release opens in the next. A data directory written by a newer release
is refused with a message, not guessed at: its rows may mean things this release cannot know.

To change the layout: append a migration (never edit a released one) and bump nothing else;
``SCHEMA_VERSION`` is the number of migrations.
"""

from __future__ import annotations

import sqlite3

# Version 1: the layout of the first release. Every statement is IF NOT EXISTS, so a data
# directory made before versions were recorded (user_version 0, same tables) takes it as-is.
V1 = """
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


MIGRATIONS: tuple[str, ...] = (V1,)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(RuntimeError):
    """The data directory was written by a newer release of the sandbox."""


def version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection, migrations: tuple[str, ...] = MIGRATIONS) -> int:
    """Bring the database up to ``len(migrations)``; returns the version it was at.

    Each step runs with the version bump in one ``BEGIN IMMEDIATE`` transaction, so a crash
    mid-migration leaves the previous version intact and two servers opening one directory
    at once migrate it once.
    """
    start = version(conn)
    if start > len(migrations):
        raise SchemaTooNew(
            f"this sandbox data directory has schema version {start}, newer than the "
            f"{len(migrations)} this release of mediagen_sandbox reads; upgrade mediagen or "
            "start the sandbox with another --data-dir"
        )
    for target, script in enumerate(migrations[start:], start=start + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if version(conn) < target:  # another process may have migrated meanwhile
                for statement in _statements(script):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {target:d}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return start


def _statements(script: str) -> list[str]:
    """Split a script into statements (``executescript`` would commit our transaction)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements

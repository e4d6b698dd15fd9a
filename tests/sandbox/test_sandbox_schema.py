"""A sandbox data directory outlives a release: its schema version, migrations and refusals."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys

import pytest
from sandbox_helpers import client, image_example, wait

from mediagen_sandbox.db import accounts
from mediagen_sandbox.db.schema import MIGRATIONS, SCHEMA_VERSION, migrate, version
from mediagen_sandbox.db.store import Store
from mediagen_sandbox.testing import running_sandbox

# Released migrations are never edited (a user's data directory already went through them):
# a change of layout is a new migration appended after these.
RELEASED = ("c596df83fae4b85ae3e6b9a6ff14e4b976541211925e558cecc90bc493928f78",)


def _user_version(db: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def _set_user_version(db: str, value: int) -> None:
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {value:d}")
    conn.close()


def test_released_migrations_are_never_edited():
    digests = tuple(hashlib.sha256(m.encode()).hexdigest() for m in MIGRATIONS)
    assert digests[: len(RELEASED)] == RELEASED
    assert len(MIGRATIONS) == SCHEMA_VERSION


def test_a_directory_from_before_versions_opens_with_its_data(tmp_path):
    data = tmp_path / "data"
    with running_sandbox(data_dir=data) as sb:
        tenant = sb.new_tenant(balance=20)
        _model, body = image_example(sb)
        with client(sb, tenant) as c:
            done = wait(c, c.post("/v1/images", json=body).json()["id"])
    db = str(data / "sandbox.db")
    assert _user_version(db) == SCHEMA_VERSION
    _set_user_version(db, 0)  # as the first release left it: same tables, no version

    with running_sandbox(data_dir=data) as sb, client(sb, tenant) as c:
        again = c.get(f"/v1/generations/{done['id']}").json()
        assert (again["status"], again["credits_charged"]) == ("completed", done["credits_charged"])
        assert c.get("/v1/credits").json()["balance"] == 20 - done["credits_charged"]
    assert _user_version(db) == SCHEMA_VERSION


def test_a_directory_from_a_newer_release_is_refused_untouched(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    Store(data / "sandbox.db").conn().close()
    db = str(data / "sandbox.db")
    _set_user_version(db, SCHEMA_VERSION + 1)
    run = subprocess.run(
        [sys.executable, "-m", "mediagen_sandbox", "--data-dir", str(data), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert f"schema version {SCHEMA_VERSION + 1}" in run.stderr
    assert "upgrade mediagen" in run.stderr
    assert "Traceback" not in run.stderr
    assert _user_version(db) == SCHEMA_VERSION + 1


def _store_with_an_org(tmp_path) -> tuple[Store, str]:
    store = Store(tmp_path / "sandbox.db")
    with store.write() as conn:
        org_id = accounts.create_org(conn, "Kept", "pro", 5.0, None)
    return store, org_id


def test_a_new_migration_runs_once_and_keeps_the_rows(tmp_path):
    store, org_id = _store_with_an_org(tmp_path)
    next_release = (*MIGRATIONS, "ALTER TABLE orgs ADD COLUMN region TEXT NOT NULL DEFAULT 'eu';")
    conn = store.conn()
    assert migrate(conn, next_release) == SCHEMA_VERSION
    assert version(conn) == SCHEMA_VERSION + 1
    row = conn.execute("SELECT name, region FROM orgs WHERE id = ?", (org_id,)).fetchone()
    assert tuple(row) == ("Kept", "eu")
    assert migrate(conn, next_release) == SCHEMA_VERSION + 1  # nothing left to do
    assert version(conn) == SCHEMA_VERSION + 1


def test_a_failing_migration_leaves_the_previous_version_whole(tmp_path):
    store, org_id = _store_with_an_org(tmp_path)
    broken = (*MIGRATIONS, "ALTER TABLE orgs ADD COLUMN half TEXT;\nALTER TABLE nowhere ADD x;")
    conn = store.conn()
    with pytest.raises(sqlite3.OperationalError, match="nowhere"):
        migrate(conn, broken)
    assert version(conn) == SCHEMA_VERSION
    columns = {r["name"] for r in conn.execute("PRAGMA table_info(orgs)")}
    assert "half" not in columns
    assert conn.execute("SELECT name FROM orgs WHERE id = ?", (org_id,)).fetchone()[0] == "Kept"

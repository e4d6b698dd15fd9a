"""Asset rows: uploads waiting for their bytes, uploaded files and rendered outputs."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from ..units import iso, utcnow
from .store import Store

_OF_ORG = (
    "SELECT id, media, status, path, content_type, width, height, duration_seconds "
    "FROM assets WHERE org_id = ?"
)
_OF_ORG = (
    "SELECT id, media, status, path, content_type, width, height, duration_seconds "
    "FROM assets WHERE org_id = ?"
)
_SQL_VARIABLES = 500  # ids per query, well under SQLite's limit on bound parameters


@dataclass(frozen=True)
class NewAsset:
    """A ready file: a rendered output or a seeded sample."""

    asset_id: str
    org_id: str
    member_id: str | None
    media: str
    content_type: str
    filename: str
    size_bytes: int | None
    path: str
    width: int | None
    height: int | None
    duration_seconds: float | None
    generation_id: str | None = None


def register_upload(
    conn: sqlite3.Connection,
    asset_id: str,
    org_id: str,
    member_id: str,
    media: str,
    content_type: str,
    filename: str,
    size_bytes: int,
) -> None:
    conn.execute(
        "INSERT INTO assets(id, org_id, member_id, media, content_type, filename, size_bytes,"
        " status, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 'upload', ?)",
        (asset_id, org_id, member_id, media, content_type, filename, size_bytes, iso(utcnow())),
    )


def insert_ready(conn: sqlite3.Connection, asset: NewAsset, at: str | None = None) -> None:
    """A file that is complete on disk (a render, a seeded sample); replaces a row of the same
    id, so settling a render twice cannot leave two rows."""
    conn.execute(
        "INSERT OR REPLACE INTO assets(id, org_id, member_id, media, content_type, "
        "filename, size_bytes, status, path, width, height, duration_seconds, "
        "source, generation_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'ready', ?, ?, ?, ?, 'output', ?, ?)",
        (
            asset.asset_id, asset.org_id, asset.member_id, asset.media, asset.content_type,
            asset.filename, asset.size_bytes, asset.path, asset.width, asset.height,
            asset.duration_seconds, asset.generation_id, at or iso(utcnow()),
        ),
    )  # fmt: skip


def upload_target(store: Store, asset_id: str) -> sqlite3.Row | None:
    """What an upload PUT checks its bytes against."""
    return store.query_one(
        "SELECT org_id, content_type, size_bytes, status FROM assets WHERE id = ?", (asset_id,)
    )


def status(conn: sqlite3.Connection, asset_id: str) -> str | None:
    row = conn.execute("SELECT status FROM assets WHERE id = ?", (asset_id,)).fetchone()
    return None if row is None else row["status"]


def mark_ready(
    conn: sqlite3.Connection,
    asset_id: str,
    path: str,
    width: int | None,
    height: int | None,
    duration_seconds: float | None,
) -> None:
    conn.execute(
        "UPDATE assets SET status = 'ready', path = ?, width = ?, height = ?, "
        "duration_seconds = ? WHERE id = ?",
        (path, width, height, duration_seconds, asset_id),
    )


def download(store: Store, asset_id: str) -> sqlite3.Row | None:
    """What an output download serves."""
    return store.query_one(
        "SELECT path, content_type, filename, status FROM assets WHERE id = ?", (asset_id,)
    )


def path(store: Store, asset_id: str) -> str | None:
    row = store.query_one("SELECT path FROM assets WHERE id = ?", (asset_id,))
    return None if row is None else row["path"]


def of_org(store: Store, org_id: str, asset_ids: Iterable[str]) -> list[sqlite3.Row]:
    """The organization's rows among ``asset_ids``, in one query per 500 ids (a body naming
    thousands of ids costs a few queries, not thousands)."""
    ids = sorted(set(asset_ids))
    rows: list[sqlite3.Row] = []
    for start in range(0, len(ids), _SQL_VARIABLES):
        chunk = ids[start : start + _SQL_VARIABLES]
        marks = ", ".join("?" * len(chunk))  # placeholders only; the ids are bound
        sql = f"{_OF_ORG} AND id IN ({marks})"
        rows.extend(store.query_all(sql, (org_id, *chunk)))
    return rows


def count(store: Store) -> int:
    return store.query_one("SELECT COUNT(*) FROM assets")[0]

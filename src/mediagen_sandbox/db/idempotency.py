"""Idempotency keys: one per organization, each bound to the request it first came with."""

from __future__ import annotations

import sqlite3

from .store import Store


def original(store: Store, org_id: str, key: str) -> sqlite3.Row | None:
    """The request hash, member and generation an earlier request with this key made."""
    return store.query_one(
        "SELECT i.request_hash, g.member_id, g.id FROM idempotency i "
        "JOIN generations g ON g.id = i.generation_id WHERE i.org_id = ? AND i.key = ?",
        (org_id, key),
    )


def taken(conn: sqlite3.Connection, org_id: str, key: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM idempotency WHERE org_id = ? AND key = ?", (org_id, key)
    ).fetchone()
    return row is not None


def bind(
    conn: sqlite3.Connection,
    org_id: str,
    key: str,
    request_hash: str,
    generation_id: str,
    at: str,
) -> None:
    conn.execute(
        "INSERT INTO idempotency(org_id, key, request_hash, generation_id, created_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (org_id, key, request_hash, generation_id, at),
    )

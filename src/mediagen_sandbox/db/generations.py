"""Generation rows: inserted pending with their reservation, settled once, listed by keyset.

Cursors are opaque (base64url of ``created_at|id``) and select rows strictly older than the
last row of the previous page, ordered by (created_at, id) descending. New generations always
get a later ``created_at`` (:meth:`Store.next_created_at`), so they can only appear before the
first page: a cursor never skips or repeats a row while generations keep arriving.
"""

from __future__ import annotations

import base64
import binascii
import sqlite3
from dataclasses import dataclass

from ..units import iso, parse_iso
from .store import Store

COLUMNS = (
    "id, type, status, model, mode, prompt, created_at, completed_at, credits_charged, "
    "error_code, error_message, idempotency_key, outputs_json, result_meta_json"
)


@dataclass(frozen=True)
class NewGeneration:
    """A pending generation as submit inserts it (the reservation is the ledger's)."""

    id: str
    org_id: str
    member_id: str
    key_id: str | None
    type: str
    model: str
    mode: str | None
    prompt: str
    created_at: str
    credits_reserved: int
    idempotency_key: str | None
    cycle: str
    job_json: str


def insert_pending(conn: sqlite3.Connection, gen: NewGeneration) -> None:
    conn.execute(
        "INSERT INTO generations(id, org_id, member_id, key_id, type, model, mode, status,"
        " prompt, created_at, credits_reserved, idempotency_key, cycle, job_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)",
        (
            gen.id, gen.org_id, gen.member_id, gen.key_id, gen.type, gen.model, gen.mode,
            gen.prompt, gen.created_at, gen.credits_reserved, gen.idempotency_key, gen.cycle,
            gen.job_json,
        ),
    )  # fmt: skip


def insert_seeded(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Synthetic history, in bulk: (id, org_id, member_id, type, model, mode, status, prompt,
    created_at, completed_at, credits_reserved, credits_charged, error_code, error_message,
    cycle, job_json, outputs_json) per row."""
    conn.executemany(
        "INSERT INTO generations(id, org_id, member_id, type, model, mode, status, prompt, "
        "created_at, completed_at, credits_reserved, credits_charged, error_code, "
        "error_message, cycle, job_json, outputs_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def pending_for_settling(conn: sqlite3.Connection, generation_id: str) -> sqlite3.Row | None:
    """The row a render settles, or None when it was settled already (a render is settled
    once, whatever retries or restarts happened)."""
    row = conn.execute(
        "SELECT org_id, member_id, status, credits_reserved, cycle FROM generations WHERE id = ?",
        (generation_id,),
    ).fetchone()
    return row if row is not None and row["status"] == "pending" else None


def mark_completed(
    conn: sqlite3.Connection,
    generation_id: str,
    at: str,
    charged: int,
    outputs_json: str,
    result_meta_json: str | None,
) -> None:
    conn.execute(
        "UPDATE generations SET status = 'completed', completed_at = ?, "
        "credits_charged = ?, outputs_json = ?, result_meta_json = ?, job_json = NULL "
        "WHERE id = ?",
        (at, charged, outputs_json, result_meta_json, generation_id),
    )


def mark_failed(
    conn: sqlite3.Connection, generation_id: str, at: str, code: str, message: str
) -> None:
    conn.execute(
        "UPDATE generations SET status = 'failed', completed_at = ?, error_code = ?, "
        "error_message = ?, job_json = NULL WHERE id = ?",
        (at, code, message, generation_id),
    )


def pending_jobs(store: Store) -> list[sqlite3.Row]:
    """Every pending generation's saved job (to render again after a restart)."""
    return store.query_all("SELECT id, org_id, job_json FROM generations WHERE status = 'pending'")


def by_id(store: Store, generation_id: str) -> sqlite3.Row | None:
    return store.query_one(f"SELECT {COLUMNS} FROM generations WHERE id = ?", (generation_id,))  # noqa: S608


def of_member(store: Store, generation_id: str, member_id: str) -> sqlite3.Row | None:
    """A generation as its member reads it (another member's is not found)."""
    return store.query_one(
        f"SELECT {COLUMNS} FROM generations WHERE id = ? AND member_id = ?",  # noqa: S608
        (generation_id, member_id),
    )


def source_of_org(store: Store, org_id: str, generation_id: str) -> sqlite3.Row | None:
    """A generation a request of the same organization names as its source."""
    return store.query_one(
        "SELECT id, type, status, model, outputs_json FROM generations WHERE id = ? AND org_id = ?",
        (generation_id, org_id),
    )


def by_interaction(store: Store, org_id: str, interaction_id: str) -> str | None:
    row = store.query_one(
        "SELECT id FROM generations WHERE org_id = ? AND status = 'completed' "
        "AND json_extract(result_meta_json, '$.interaction_id') = ?",
        (org_id, interaction_id),
    )
    return None if row is None else row["id"]


def status_counts(store: Store) -> dict[str, int]:
    rows = store.query_all("SELECT status, COUNT(*) AS n FROM generations GROUP BY status")
    return {r["status"]: r["n"] for r in rows}


def encode_cursor(created_at: str, generation_id: str) -> str:
    raw = f"{created_at}|{generation_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """Raises ValueError for a cursor this server did not make."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created_at, generation_id = raw.split("|", 1)
        parse_iso(created_at)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("not a cursor returned by this server") from exc
    return created_at, generation_id


_FILTERS = (("status", "status = ?"), ("type", "type = ?"), ("model", "model = ?"))


def page(
    store: Store,
    member_id: str,
    limit: int,
    after: str | None,
    filters: dict[str, str | None],
    created_after: str | None,
) -> tuple[list[sqlite3.Row], str | None]:
    """One page of a member's generations, newest first, and the cursor of the next page."""
    where = ["member_id = ?"]
    params: list = [member_id]
    for name, clause in _FILTERS:
        if filters.get(name):
            where.append(clause)
            params.append(filters[name])
    if created_after:
        where.append("created_at > ?")
        params.append(iso(parse_iso(created_after)))
    if after:
        where.append("(created_at, id) < (?, ?)")
        params.extend(decode_cursor(after))
    # The clauses are constants; every value is a bound parameter.
    sql = f"SELECT {COLUMNS} FROM generations WHERE {' AND '.join(where)} "  # noqa: S608
    sql += "ORDER BY created_at DESC, id DESC LIMIT ?"
    params.append(limit + 1)
    rows = store.query_all(sql, tuple(params))
    if len(rows) > limit:
        rows = rows[:limit]
        return rows, encode_cursor(rows[-1]["created_at"], rows[-1]["id"])
    return rows, None

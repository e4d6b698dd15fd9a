"""The credit ledger: grant, reserve, charge, refund — and the balances they move.

Each organization row carries four running totals in cents that always satisfy
``available + reserved + charged == granted``; every move also appends a ledger entry, so the
totals can be re-derived from the entries. A member's usage in the current billing cycle
(reserved + charged) is kept beside it for the per-member cap. Every move takes the
connection of an open write transaction (:meth:`Store.write`).
"""

from __future__ import annotations

import sqlite3

from ..units import iso, utcnow
from .store import Store


def _entry(
    conn: sqlite3.Connection,
    org_id: str,
    kind: str,
    amount: int,
    member_id: str | None = None,
    generation_id: str | None = None,
    note: str | None = None,
    at: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO ledger(org_id, member_id, generation_id, kind, amount, created_at, note) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (org_id, member_id, generation_id, kind, amount, at or iso(utcnow()), note),
    )


def grant(conn: sqlite3.Connection, org_id: str, amount: int, note: str = "grant") -> None:
    """Add (or, when negative, remove) available credits."""
    if amount == 0:
        return
    conn.execute(
        "UPDATE orgs SET granted = granted + ?, available = available + ? WHERE id = ?",
        (amount, amount, org_id),
    )
    _entry(conn, org_id, "grant", amount, note=note)


def set_available(conn: sqlite3.Connection, org_id: str, target: int) -> None:
    row = conn.execute("SELECT available FROM orgs WHERE id = ?", (org_id,)).fetchone()
    grant(conn, org_id, target - row[0], note="balance set by admin")


def reserve(
    conn: sqlite3.Connection,
    org_id: str,
    member_id: str,
    generation_id: str,
    amount: int,
    cycle: str,
    at: str,
) -> None:
    conn.execute(
        "UPDATE orgs SET available = available - ?, reserved = reserved + ? WHERE id = ?",
        (amount, amount, org_id),
    )
    add_usage(conn, member_id, cycle, amount)
    _entry(conn, org_id, "reserve", amount, member_id, generation_id, at=at)


def charge(
    conn: sqlite3.Connection, org_id: str, member_id: str, generation_id: str, amount: int
) -> None:
    conn.execute(
        "UPDATE orgs SET reserved = reserved - ?, charged = charged + ? WHERE id = ?",
        (amount, amount, org_id),
    )
    _entry(conn, org_id, "charge", amount, member_id, generation_id)


def refund(
    conn: sqlite3.Connection,
    org_id: str,
    member_id: str,
    generation_id: str,
    amount: int,
    cycle: str,
) -> None:
    conn.execute(
        "UPDATE orgs SET reserved = reserved - ?, available = available + ? WHERE id = ?",
        (amount, amount, org_id),
    )
    add_usage(conn, member_id, cycle, -amount)
    _entry(conn, org_id, "refund", amount, member_id, generation_id)


def add_usage(conn: sqlite3.Connection, member_id: str, cycle: str, amount: int) -> None:
    conn.execute(
        "INSERT INTO member_usage(member_id, cycle, used) VALUES (?, ?, ?) "
        "ON CONFLICT(member_id, cycle) DO UPDATE SET used = used + excluded.used",
        (member_id, cycle, amount),
    )


def member_used(conn: sqlite3.Connection, member_id: str, cycle: str) -> int:
    row = conn.execute(
        "SELECT used FROM member_usage WHERE member_id = ? AND cycle = ?", (member_id, cycle)
    ).fetchone()
    return row[0] if row else 0


def entries(store: Store, org_id: str) -> list[sqlite3.Row]:
    """Every ledger entry of the organization, in order."""
    return store.query_all(
        "SELECT seq, kind, amount, member_id, generation_id, created_at, note FROM ledger "
        "WHERE org_id = ? ORDER BY seq",
        (org_id,),
    )


def add_seeded(
    conn: sqlite3.Connection, org_id: str, rows: list[tuple], reserved: int, charged: int
) -> None:
    """Synthetic history's entries, (org_id, member_id, generation_id, kind, amount,
    created_at, note) each, and the balances they move: what was granted for them and not
    refunded leaves ``available``; part of it is still reserved, the rest charged."""
    conn.executemany(
        "INSERT INTO ledger(org_id, member_id, generation_id, kind, amount, created_at, note) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.execute(
        "UPDATE orgs SET available = available - ?, reserved = reserved + ?, "
        "charged = charged + ? WHERE id = ?",
        (reserved + charged, reserved, charged, org_id),
    )

"""Organizations, members and API keys (stored hashed), and the key lookup behind auth."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from dataclasses import dataclass

from ..units import iso, parse_iso, to_cents, utcnow
from .store import Store

KEY_PREFIX = "mgsk_"


def hash_key(api_key: str) -> str:
    return hashlib.sha256(api_key.encode()).hexdigest()


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Caller:
    """Who a valid key bills as."""

    key_id: str
    member_id: str
    org_id: str


class KeyState:
    VALID = "valid"
    UNKNOWN = "unknown"
    REVOKED = "revoked"
    EXPIRED = "expired"


def lookup_key(store: Store, api_key: str) -> tuple[str, Caller | None]:
    row = store.query_one(
        "SELECT id, member_id, org_id, expires_at, revoked_at FROM api_keys WHERE key_hash = ?",
        (hash_key(api_key),),
    )
    if row is None:
        return KeyState.UNKNOWN, None
    if row["revoked_at"] is not None:
        return KeyState.REVOKED, None
    if row["expires_at"] is not None and row["expires_at"] <= iso(utcnow()):
        return KeyState.EXPIRED, None
    return KeyState.VALID, Caller(row["id"], row["member_id"], row["org_id"])


def create_org(
    conn: sqlite3.Connection, name: str, plan: str, discount_percent: float, org_id: str | None
) -> str:
    org_id = org_id or new_id("org")
    conn.execute(
        "INSERT INTO orgs(id, name, plan, discount_percent, created_at) VALUES (?, ?, ?, ?, ?)",
        (org_id, name, plan, discount_percent, iso(utcnow())),
    )
    return org_id


def create_member(
    conn: sqlite3.Connection, org_id: str, name: str, cap: float | None, member_id: str | None
) -> str:
    member_id = member_id or new_id("mem")
    conn.execute(
        "INSERT INTO members(id, org_id, name, cap, created_at) VALUES (?, ?, ?, ?, ?)",
        (member_id, org_id, name, None if cap is None else to_cents(cap), iso(utcnow())),
    )
    return member_id


def create_key(
    conn: sqlite3.Connection,
    member_id: str,
    org_id: str,
    name: str,
    expires_at: str | None,
    api_key: str | None = None,
) -> tuple[str, str]:
    """Insert a key; returns (key id, plaintext). Only the hash is stored."""
    api_key = api_key or new_api_key()
    key_id = new_id("key")
    conn.execute(
        "INSERT INTO api_keys(id, member_id, org_id, key_hash, prefix, name, created_at, "
        "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            key_id,
            member_id,
            org_id,
            hash_key(api_key),
            api_key[: len(KEY_PREFIX) + 4],
            name,
            iso(utcnow()),
            None if expires_at is None else iso(parse_iso(expires_at)),
        ),
    )
    return key_id, api_key


def org(store: Store, org_id: str) -> sqlite3.Row | None:
    return store.query_one("SELECT * FROM orgs WHERE id = ?", (org_id,))


def org_exists(conn: sqlite3.Connection, org_id: str) -> bool:
    return conn.execute("SELECT 1 FROM orgs WHERE id = ?", (org_id,)).fetchone() is not None


def org_ids(store: Store) -> list[str]:
    """Every organization, oldest first."""
    return [r[0] for r in store.query_all("SELECT id FROM orgs ORDER BY rowid")]


_ORG_SETTINGS = ("name", "plan", "discount_percent")


def update_org(conn: sqlite3.Connection, org_id: str, **settings: object) -> None:
    """Change any of ``name``, ``plan``, ``discount_percent`` (None leaves one as it is)."""
    for column in _ORG_SETTINGS:
        value = settings.pop(column, None)
        if value is not None:
            sql = f"UPDATE orgs SET {column} = ? WHERE id = ?"  # noqa: S608 - fixed names
            conn.execute(sql, (value, org_id))
    if settings:
        raise TypeError(f"not an organization setting: {', '.join(settings)}")


def member(store: Store, member_id: str) -> sqlite3.Row | None:
    return store.query_one("SELECT * FROM members WHERE id = ?", (member_id,))


def set_member_cap(conn: sqlite3.Connection, member_id: str, cap: int | None) -> None:
    conn.execute("UPDATE members SET cap = ? WHERE id = ?", (cap, member_id))


def set_member_name(conn: sqlite3.Connection, member_id: str, name: str) -> None:
    conn.execute("UPDATE members SET name = ? WHERE id = ?", (name, member_id))


def key(store: Store, key_id: str) -> sqlite3.Row | None:
    return store.query_one("SELECT * FROM api_keys WHERE id = ?", (key_id,))


def key_hash_exists(conn: sqlite3.Connection, api_key: str) -> bool:
    row = conn.execute("SELECT 1 FROM api_keys WHERE key_hash = ?", (hash_key(api_key),))
    return row.fetchone() is not None


def set_key_revoked_at(conn: sqlite3.Connection, key_id: str, at: str | None) -> None:
    conn.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ?", (at, key_id))


def set_key_expires_at(conn: sqlite3.Connection, key_id: str, at: str | None) -> None:
    conn.execute("UPDATE api_keys SET expires_at = ? WHERE id = ?", (at, key_id))


def funds(conn: sqlite3.Connection, org_id: str, member_id: str) -> sqlite3.Row:
    """The organization's balances and plan with the member's cap: what a key may spend.
    Read inside a transaction (a write one to check funds and reserve atomically)."""
    return conn.execute(
        "SELECT o.available, o.reserved, o.plan, o.discount_percent, m.cap "
        "FROM orgs o JOIN members m ON m.id = ? WHERE o.id = ?",
        (member_id, org_id),
    ).fetchone()


_COUNTED = {"orgs": "orgs", "members": "members", "keys": "api_keys"}


def counts(store: Store) -> dict[str, int]:
    """How many organizations, members and keys the sandbox holds."""
    return {
        name: store.query_one(f"SELECT COUNT(*) FROM {table}")[0]  # noqa: S608 - fixed names
        for name, table in _COUNTED.items()
    }

"""Organizations, members and API keys (stored hashed), and the key lookup behind auth."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from dataclasses import dataclass

from .store import Store, iso, parse_iso, to_cents, utcnow

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

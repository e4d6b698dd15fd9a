"""The admin API (outside `/v1`, header ``X-Admin-Token``): tenants, keys, balances, faults.

For tests and demos only. Shapes are documented in the README; every response is JSON and every
error the spec's Error body.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from .. import limits
from ..config import GENERATION_ERROR_CODES
from ..context import SandboxContext
from ..db import accounts, assets, generations, ledger
from ..errors import error_responses, field_error, not_found
from ..seed import seed_generations
from ..units import iso, parse_iso, to_cents, to_credits, utcnow
from .deps import admin
from .responses import json_response

router = APIRouter(prefix="/admin", tags=["admin"], responses=error_responses(401, 403, 404, 422))
AdminDep = Annotated[SandboxContext, Depends(admin)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


# Credit amounts are stored as integer cents: anything larger is not money the ledger can hold.
Credits = Annotated[float, Field(ge=-limits.CREDITS, le=limits.CREDITS)]


class OrgCreate(_Body):
    name: str = "Organization"
    plan: str = "pro"
    balance: Credits = Field(default=0.0, ge=0)
    discount_percent: float = Field(default=0.0, ge=0, le=100)


class OrgPatch(_Body):
    name: str | None = None
    plan: str | None = None
    discount_percent: float | None = Field(default=None, ge=0, le=100)
    balance: Credits | None = Field(default=None, ge=0, description="Set the available balance.")
    grant: Credits | None = Field(default=None, description="Add (or remove) available credits.")


class MemberCreate(_Body):
    name: str = "Member"
    cap: Credits | None = Field(default=None, ge=0, description="Credits per billing cycle.")


class MemberPatch(_Body):
    name: str | None = None
    cap: Credits | None = Field(default=None, ge=0, description="null removes the cap.")


class KeyCreate(_Body):
    name: str = "key"
    expires_at: str | None = None


class KeyPatch(_Body):
    revoked: bool | None = None
    expires_at: str | None = Field(default=None, description="ISO date-time; null: never.")
    expire_now: bool | None = None
    rate_limit_per_second: float | None = Field(
        default=None, gt=0, description="This key's own limit; null: the server's again."
    )
    rate_limit_burst: int | None = Field(
        default=None, ge=1, description="This key's own burst (default: its per-second rate)."
    )


class ConfigPatch(_Body):
    speed: float | None = Field(default=None, ge=0)
    output_url_ttl_seconds: float | None = Field(default=None, ge=0)
    upload_url_ttl_seconds: float | None = Field(default=None, ge=0)
    max_upload_bytes: int | None = Field(default=None, ge=1)
    rate_limit_per_second: float | None = Field(default=None, gt=0)
    rate_limit_per_minute: float | None = Field(default=None, gt=0)
    rate_limit_burst: int | None = Field(default=None, ge=1)
    failure_rates: dict[str, float] | None = None
    failure_code: str | None = None
    drop_next_submits: int | None = Field(default=None, ge=0)
    error_next_requests: int | None = Field(default=None, ge=0)


class SeedRequest(_Body):
    member_id: str
    count: int = Field(ge=1, le=1_000_000)
    completed_fraction: float = Field(default=0.85, ge=0, le=1)
    failed_fraction: float = Field(default=0.1, ge=0, le=1)
    models: list[str] | None = None
    start: str | None = Field(default=None, description="created_at of the oldest row")
    interval_seconds: float = Field(default=1.0, gt=0)
    seed: int = 0


def _org_json(row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "plan": row["plan"],
        "discount_percent": row["discount_percent"],
        "balance": to_credits(row["available"]),
        "granted": to_credits(row["granted"]),
        "reserved": to_credits(row["reserved"]),
        "charged": to_credits(row["charged"]),
        "created_at": row["created_at"],
    }


def _member_json(row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "org_id": row["org_id"],
        "name": row["name"],
        "cap": None if row["cap"] is None else to_credits(row["cap"]),
        "created_at": row["created_at"],
    }


def _key_json(row, api_key: str | None = None) -> dict[str, Any]:
    out = {
        "id": row["id"],
        "member_id": row["member_id"],
        "org_id": row["org_id"],
        "name": row["name"],
        "prefix": row["prefix"],
        "created_at": row["created_at"],
        "expires_at": row["expires_at"],
        "revoked": row["revoked_at"] is not None,
    }
    if api_key is not None:
        out["api_key"] = api_key
    return out


def _org(ctx: SandboxContext, org_id: str):
    row = accounts.org(ctx.store, org_id)
    if row is None:
        raise not_found(f"Organization {org_id} not found.")
    return row


def _member(ctx: SandboxContext, member_id: str):
    row = accounts.member(ctx.store, member_id)
    if row is None:
        raise not_found(f"Member {member_id} not found.")
    return row


def _iso_or_422(value: str, loc: list) -> str:
    try:
        return iso(parse_iso(value))
    except ValueError:
        raise field_error(loc, "must be an ISO 8601 date-time", "datetime_parsing") from None


@router.post("/orgs", summary="Create an organization (with an initial grant)")
async def create_org(body: OrgCreate, ctx: AdminDep):
    with ctx.store.write() as conn:
        org_id = accounts.create_org(conn, body.name, body.plan, body.discount_percent, None)
        ledger.grant(conn, org_id, to_cents(body.balance), note="initial grant")
    return json_response(_org_json(_org(ctx, org_id)))


@router.get("/orgs/{org_id}", summary="An organization and its balances")
async def get_org(org_id: str, ctx: AdminDep):
    return json_response(_org_json(_org(ctx, org_id)))


@router.patch("/orgs/{org_id}", summary="Change plan, discount, name or balance")
async def patch_org(org_id: str, body: OrgPatch, ctx: AdminDep):
    _org(ctx, org_id)
    with ctx.store.write() as conn:
        accounts.update_org(
            conn, org_id, name=body.name, plan=body.plan, discount_percent=body.discount_percent
        )
        if body.balance is not None:
            ledger.set_available(conn, org_id, to_cents(body.balance))
        if body.grant is not None:
            ledger.grant(conn, org_id, to_cents(body.grant))
    return json_response(_org_json(_org(ctx, org_id)))


@router.post("/orgs/{org_id}/members", summary="Add a member (optionally with a cap)")
async def create_member(org_id: str, body: MemberCreate, ctx: AdminDep):
    _org(ctx, org_id)
    with ctx.store.write() as conn:
        member_id = accounts.create_member(conn, org_id, body.name, body.cap, None)
    return json_response(_member_json(_member(ctx, member_id)))


@router.get("/members/{member_id}", summary="A member")
async def get_member(member_id: str, ctx: AdminDep):
    return json_response(_member_json(_member(ctx, member_id)))


@router.patch("/members/{member_id}", summary="Change a member's cap (null removes it)")
async def patch_member(member_id: str, body: MemberPatch, ctx: AdminDep):
    _member(ctx, member_id)
    with ctx.store.write() as conn:
        if "cap" in body.model_fields_set:
            cap = None if body.cap is None else to_cents(body.cap)
            accounts.set_member_cap(conn, member_id, cap)
        if body.name is not None:
            accounts.set_member_name(conn, member_id, body.name)
    return json_response(_member_json(_member(ctx, member_id)))


@router.post("/members/{member_id}/keys", summary="Create an API key (the secret is shown once)")
async def create_key(member_id: str, body: KeyCreate, ctx: AdminDep):
    member = _member(ctx, member_id)
    expires = _iso_or_422(body.expires_at, ["body", "expires_at"]) if body.expires_at else None
    with ctx.store.write() as conn:
        key_id, api_key = accounts.create_key(conn, member_id, member["org_id"], body.name, expires)
    return json_response(_key_json(accounts.key(ctx.store, key_id), api_key))


@router.patch("/keys/{key_id}", summary="Revoke or expire a key, or give it a rate limit")
async def patch_key(key_id: str, body: KeyPatch, ctx: AdminDep):
    if accounts.key(ctx.store, key_id) is None:
        raise not_found(f"Key {key_id} not found.")
    _set_own_limit(ctx, key_id, body)
    with ctx.store.write() as conn:
        if body.revoked is not None:
            revoked_at = iso(utcnow()) if body.revoked else None
            accounts.set_key_revoked_at(conn, key_id, revoked_at)
        if body.expire_now:
            accounts.set_key_expires_at(conn, key_id, iso(utcnow()))
        elif "expires_at" in body.model_fields_set:
            expires = (
                _iso_or_422(body.expires_at, ["body", "expires_at"]) if body.expires_at else None
            )
            accounts.set_key_expires_at(conn, key_id, expires)
    own = ctx.limiter.own_limit(key_id)
    return json_response(
        {
            **_key_json(accounts.key(ctx.store, key_id)),
            "rate_limit_per_second": own[0] if own else None,
            "rate_limit_burst": own[1] if own else None,
        }
    )


def _set_own_limit(ctx: SandboxContext, key_id: str, body: KeyPatch) -> None:
    """A key's own rate limit, when the patch names one (``null`` per second: the server's)."""
    if "rate_limit_per_second" in body.model_fields_set:
        rate = body.rate_limit_per_second
        burst = body.rate_limit_burst or (max(1, int(rate)) if rate is not None else None)
        ctx.limiter.set_own_limit(key_id, None if rate is None else (rate, burst or 1))
    elif body.rate_limit_burst is not None:
        raise field_error(["body", "rate_limit_burst"], "set with rate_limit_per_second", "missing")


@router.get("/keys/{key_id}/requests", summary="How many requests of a key met its rate limit")
async def key_requests(key_id: str, ctx: AdminDep):
    if accounts.key(ctx.store, key_id) is None:
        raise not_found(f"Key {key_id} not found.")
    passed, limited = ctx.limiter.counts(key_id)
    return json_response({"key_id": key_id, "passed": passed, "limited": limited})


@router.get("/config", summary="Runtime settings")
async def get_config(ctx: AdminDep):
    return json_response(ctx.config.current.to_dict())


@router.patch("/config", summary="Change speed, URL lifetimes, rate limits or faults")
async def patch_config(body: ConfigPatch, ctx: AdminDep):
    changes = body.model_dump(exclude_unset=True, exclude_none=True)
    per_minute = changes.pop("rate_limit_per_minute", None)
    if per_minute is not None:
        changes["rate_limit_per_second"] = per_minute / 60.0
    if "failure_code" in changes and changes["failure_code"] not in GENERATION_ERROR_CODES:
        raise field_error(
            ["body", "failure_code"],
            f"must be one of {', '.join(GENERATION_ERROR_CODES)}",
            "enum",
        )
    for model_id, rate in (changes.get("failure_rates") or {}).items():
        if not 0 <= rate <= 1:
            raise field_error(
                ["body", "failure_rates", model_id], "must be between 0 and 1", "range"
            )
    if {"rate_limit_per_second", "rate_limit_burst"} & changes.keys():
        ctx.limiter.reset()
    config = ctx.config.update(changes)
    return json_response(config.to_dict())


@router.get("/ledger/{org_id}", summary="An organization's balances and every ledger entry")
async def get_ledger(org_id: str, ctx: AdminDep):
    with ctx.store.snapshot():  # balances and entries from the same moment
        org = _org(ctx, org_id)
        rows = ledger.entries(ctx.store, org_id)
    entries = [
        {
            "seq": r["seq"],
            "kind": r["kind"],
            "amount": to_credits(r["amount"]),
            "member_id": r["member_id"],
            "generation_id": r["generation_id"],
            "created_at": r["created_at"],
            "note": r["note"],
        }
        for r in rows
    ]
    return json_response({**_org_json(org), "org_id": org_id, "entries": entries})


@router.get("/state", summary="Counts, settings and the server's identity")
async def get_state(ctx: AdminDep):
    return json_response(
        {
            "base_url": ctx.base_url,
            "data_dir": str(ctx.data_dir),
            "counts": {**accounts.counts(ctx.store), "assets": assets.count(ctx.store)},
            "org_ids": accounts.org_ids(ctx.store),
            "generations": generations.status_counts(ctx.store),
            "config": ctx.config.current.to_dict(),
        }
    )


@router.post(
    "/orgs/{org_id}/seed-generations",
    summary="Bulk-insert synthetic generations for a member (with their ledger entries)",
)
async def seed(org_id: str, body: SeedRequest, ctx: AdminDep):
    _org(ctx, org_id)
    member = _member(ctx, body.member_id)
    if member["org_id"] != org_id:
        raise field_error(["body", "member_id"], "not a member of this organization", "value")
    if body.completed_fraction + body.failed_fraction > 1:
        raise field_error(
            ["body", "failed_fraction"],
            "completed_fraction + failed_fraction must be at most 1",
            "value",
        )
    start = _iso_or_422(body.start, ["body", "start"]) if body.start else None
    result = await run_in_threadpool(seed_generations, ctx, org_id, body, start)
    return json_response(result)

"""The `/v1` routes of the spec: submit, generations, models, estimate, credits.

Every handler authenticates first (401 before anything else, and the per-key rate limit), then
parses its body or query (422), then does its work. Responses are pre-serialized JSON.
"""

from __future__ import annotations

import re
from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from .. import catalog, limits
from ..asgi import DROP_SCOPE_KEY
from ..context import SandboxContext
from ..db import accounts, generations as rows
from ..db.accounts import Caller
from ..db.ledger import member_used
from ..errors import error_responses, field_error, not_found, validation_error
from ..generations import generation_json
from ..lookup import OrgLookup
from ..schemas import (
    AudioRequest,
    Credits,
    Estimate,
    Generation,
    GenerationPage,
    ImageRequest,
    ModelList,
    VideoRequest,
)
from ..submit import credits_after_discount, submit
from ..units import billing_cycle, cycle_reset_at, parse_iso, to_credits, utcnow
from .deps import authenticate
from .parsing import body_doc, parse_query, query_doc, read_json
from .responses import encoded_response, json_bytes, json_response

router = APIRouter(prefix="/v1")

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)

SUBMIT_ERRORS = error_responses(401, 402, 403, 409, 422, 429)
IDEMPOTENCY_HEADER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "At most 128 characters, no whitespace. Equivalent to the body field "
    "idempotency_key; when both are sent they must match (else 422).",
    "schema": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": r"^\S+$"},
}


def _submit_doc(model: type[BaseModel]) -> dict:
    return {**body_doc(model), "parameters": [IDEMPOTENCY_HEADER]}


async def _submit(request: Request, kind: str, model: type[BaseModel]):
    """Validation, asset lookups and the write transaction run on a worker thread, in the
    organization's turn (:mod:`mediagen_sandbox.fairness`): however large the body and however
    many of them, the event loop keeps answering everyone else."""
    who = authenticate(request)
    ctx: SandboxContext = request.app.state.ctx
    raw = await read_json(request)
    key = request.headers.get("idempotency-key")
    result = await ctx.turns.run(who.org_id, _parse_and_submit, ctx, who, kind, model, raw, key)
    if result.drop_connection:
        request.scope[DROP_SCOPE_KEY].requested = True
    return json_response(result.generation)


def _parse_and_submit(ctx, who: Caller, kind: str, model: type[BaseModel], raw: bytes, key):
    """One trip to a worker thread for the whole submit."""
    return submit(ctx, who, kind, ctx.bodies.params(model, raw), key)


@router.get(
    "/generations/{generation_id}",
    response_model=Generation,
    responses=error_responses(401, 403, 404, 422, 429),
    summary="Get a generation",
)
async def get_generation(request: Request, generation_id: str):
    who = authenticate(request)
    ctx: SandboxContext = request.app.state.ctx
    if not _UUID.match(generation_id):
        raise field_error(
            ["path", "generation_id"], "must be a UUID-shaped generation id", "uuid_parsing"
        )
    row = rows.of_member(ctx.store, generation_id.lower(), who.member_id)
    if row is None:
        raise not_found(f"Generation {generation_id} not found for this key.")
    return json_response(generation_json(row, ctx.output_url, ctx.data_dir))


@router.post(
    "/videos",
    response_model=Generation,
    responses=SUBMIT_ERRORS,
    openapi_extra=_submit_doc(VideoRequest),
    summary="Submit a video generation",
)
async def create_video(request: Request):
    return await _submit(request, "video", VideoRequest)


@router.post(
    "/images",
    response_model=Generation,
    responses=SUBMIT_ERRORS,
    openapi_extra=_submit_doc(ImageRequest),
    summary="Submit an image generation",
)
async def create_image(request: Request):
    return await _submit(request, "image", ImageRequest)


@router.post(
    "/audio",
    response_model=Generation,
    responses=SUBMIT_ERRORS,
    openapi_extra=_submit_doc(AudioRequest),
    summary="Submit a speech or music generation",
)
async def create_audio(request: Request):
    return await _submit(request, "audio", AudioRequest)


class ListQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    limit: int = Field(default=20, ge=1, le=100, description="Page size: default 20, max 100.")
    after: str = Field(
        default=None,
        max_length=limits.NAME_CHARS,
        description="The `next_cursor` of the previous page.",
    )
    status: Literal["pending", "completed", "failed"] = None
    type: Literal["image", "video", "audio"] = None
    model: str = Field(default=None, max_length=limits.NAME_CHARS)
    created_after: str = Field(
        default=None, max_length=64, description="ISO 8601 date-time; strictly after."
    )


@router.get(
    "/generations",
    response_model=GenerationPage,
    responses=error_responses(401, 403, 422, 429),
    openapi_extra=query_doc(ListQuery),
    summary="List the key creator's generations, newest first",
)
async def get_generations(request: Request):
    who = authenticate(request)
    ctx: SandboxContext = request.app.state.ctx
    q = parse_query(ListQuery, request.query_params)
    if q.created_after is not None:
        try:
            parse_iso(q.created_after)
        except ValueError:
            raise field_error(
                ["query", "created_after"],
                "must be an ISO 8601 date-time within the years 1 to 9999 (UTC)",
                "datetime_parsing",
            ) from None
    if q.after is not None:
        try:
            rows.decode_cursor(q.after)
        except ValueError as exc:
            raise field_error(["query", "after"], str(exc), "cursor_invalid") from None
    return encoded_response(await ctx.turns.run(who.org_id, _page, ctx, who, q))


def _page(ctx: SandboxContext, who: Caller, q: ListQuery) -> bytes:
    """The page, encoded (in the organization's turn, like the query)."""
    filters = {"status": q.status, "type": q.type, "model": q.model}
    found, next_cursor = rows.page(
        ctx.store, who.member_id, q.limit, q.after, filters, q.created_after
    )
    return json_bytes(
        {
            "data": [generation_json(r, ctx.output_url, ctx.data_dir) for r in found],
            "next_cursor": next_cursor,
            "has_more": next_cursor is not None,
        }
    )


class ModelsQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Literal["image", "video", "audio"] = None


@router.get(
    "/models",
    response_model=ModelList,
    responses=error_responses(401, 403, 422, 429),
    openapi_extra=query_doc(ModelsQuery),
    summary="List the models",
)
async def get_models(request: Request):
    authenticate(request)
    q = parse_query(ModelsQuery, request.query_params)
    return json_response({"data": catalog.list_models(q.type)})


@router.get(
    "/models/{model_id}",
    response_model=dict,
    responses=error_responses(401, 403, 404, 422, 429),
    summary="Get one model's catalog entry",
)
async def get_model(request: Request, model_id: str):
    authenticate(request)
    entry = catalog.get_model(model_id)
    if entry is None:
        raise not_found(f"Model {model_id!r} not found.")
    return json_response(entry)


class EstimateQuery(BaseModel):
    """The estimate's query names (docs/wire-contract.md); the catalog reads the raw values.

    Every number is bounded (``limits``): a quote must never cost more work than the largest
    request it can describe.
    """

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)
    duration_seconds: float = Field(
        default=None, gt=0, le=limits.DURATION_SECONDS, description="Seconds priced per second."
    )
    quality: str = Field(default=None, max_length=limits.NAME_CHARS)
    tier: str = Field(
        default=None, max_length=limits.NAME_CHARS, description="Resolution tier, e.g. 720p."
    )
    mode: str = Field(default=None, max_length=limits.NAME_CHARS)
    variant: str = Field(default=None, max_length=limits.VARIANT_CHARS)
    params: str = Field(
        default=None, max_length=2000, description="JSON object of other priced parameters."
    )
    idempotency_key: str = Field(default=None, max_length=128)
    reference_image_count: int = Field(default=None, ge=0, le=limits.COUNT)
    first_frame_count: float = Field(default=None, ge=0, le=1)
    text_length: int = Field(
        default=None,
        ge=0,
        le=limits.SPEECH_TOTAL_CHARS,
        description="Characters of speech text (at most the longest script a request holds).",
    )
    input_tokens: int = Field(default=None, ge=0, le=limits.TOKENS)
    output_tokens: int = Field(default=None, ge=0, le=limits.TOKENS)
    image_quality: str = Field(default=None, max_length=limits.NAME_CHARS)
    image_resolution: str = Field(default=None, max_length=limits.NAME_CHARS)
    size: str = Field(
        default=None, max_length=limits.NAME_CHARS, description="Aspect ratio or WxH size."
    )
    generate_audio: bool = None
    generation_count: int = Field(
        default=None, ge=1, le=limits.COUNT, description="Number of outputs."
    )


def spendable(ctx: SandboxContext, who: Caller) -> dict:
    """Balances as the key sees them: the org's available credits, capped by the member cap
    (balances and the member's usage read at one moment, so they always agree)."""
    cycle = billing_cycle(utcnow())
    with ctx.store.snapshot() as conn:
        row = accounts.funds(conn, who.org_id, who.member_id)
        used = member_used(conn, who.member_id, cycle)
    available = row["available"]
    out = {
        "balance": to_credits(available),
        "organization_balance": to_credits(available),
        "reserved": to_credits(row["reserved"]),
        "plan": row["plan"],
        "discount_percent": row["discount_percent"],
        "member_limit": None,
    }
    if row["cap"] is not None:
        remaining = max(row["cap"] - used, 0)
        out["balance"] = to_credits(min(available, remaining))
        out["member_limit"] = {
            "limit": to_credits(row["cap"]),
            "used": to_credits(used),
            "remaining": to_credits(remaining),
            "resets_at": cycle_reset_at(cycle),
        }
    return out


@router.get(
    "/models/{model_id}/estimate",
    response_model=Estimate,
    responses=error_responses(401, 403, 404, 422, 429),
    openapi_extra=query_doc(EstimateQuery),
    summary="Quote a price (reserves nothing)",
)
async def estimate(request: Request, model_id: str):
    who = authenticate(request)
    query = dict(request.query_params)
    return json_response(
        await request.app.state.ctx.turns.run(
            who.org_id, quote, request.app.state.ctx, who, model_id, query
        )
    )


def quote(ctx: SandboxContext, who: Caller, model_id: str, query: dict) -> dict:
    """The estimate's body (on a worker thread: it may look up and probe an asset)."""
    model = catalog.get_model(model_id)
    if model is None:
        raise not_found(f"Model {model_id!r} not found.")
    parse_query(EstimateQuery, query)
    try:
        priced = catalog.estimate_from_query(model_id, query, OrgLookup(ctx.store, who.org_id))
    except catalog.ValidationFailed as exc:
        raise validation_error(str(exc), list(exc.details)) from None
    balances = spendable(ctx, who)
    plan = balances["plan"]
    plans = model.get("plans")
    allowed = plans is None or plan in plans
    discount = balances["discount_percent"]
    after_discount = credits_after_discount(priced.list_credits, discount)
    reason = None
    if not allowed:
        reason = (
            f"The organization's plan {plan!r} cannot use model {model_id!r} "
            f"(plans: {', '.join(plans)})."
        )
    return {
        "allowed": allowed,
        "balance": balances["balance"],
        "can_afford": balances["balance"] >= after_discount,
        "credits": priced.list_credits,
        "credits_after_discount": after_discount,
        "model": priced.model_id,
        "billable_duration_seconds": priced.billable_duration_seconds,
        "discount_percent": discount,
        "reason": reason,
        "mode": priced.mode,
    }


@router.get(
    "/credits",
    response_model=Credits,
    responses=error_responses(401, 403, 429),
    summary="Credits available to this key now",
)
async def credits(request: Request):
    out = spendable(request.app.state.ctx, authenticate(request))
    if out["member_limit"] is None:
        del out["member_limit"]
    return json_response(out)

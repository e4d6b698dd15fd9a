"""The submit flow shared by ``POST /v1/videos``, ``/v1/images`` and ``/v1/audio``.

Order of checks (each one before any credit moves):

1. idempotency key rules (header <= 128 chars; body field 1..128 non-whitespace; both given
   and different -> 422);
2. an existing idempotency record for the organization: same request -> the original
   generation, charged nothing; different request -> 409 ``conflict``;
3. fault markers, then the catalog's model rules (-> 422 with ``details``);
4. the organization's plan (-> 403), then balance and member cap (-> 402, with the needed and
   available credits in the message).

Then one ``BEGIN IMMEDIATE`` transaction re-checks the idempotency record and the balances,
inserts the generation, the reservation and the idempotency record together, and commits. Only
after the commit is the job scheduled.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from . import catalog, faults
from .context import SandboxContext
from .db import accounts, idempotency, ledger
from .db import generations as generation_rows
from .db.accounts import Caller
from .errors import conflict, field_error, forbidden, payment_required, validation_error
from .generations import generation_json
from .jobs import Job, OutputSlot, asset_path
from .lookup import OrgLookup
from .media import extension_for
from .units import billing_cycle, cycle_reset_at, to_cents, to_credits, utcnow


@dataclass
class SubmitResult:
    generation: dict
    drop_connection: bool


def credits_after_discount(list_credits: float, discount_percent: float) -> float:
    """The discounted price, rounded half-up to 2 decimals: what is reserved and charged."""
    value = Decimal(str(list_credits)) * (Decimal(100) - Decimal(str(discount_percent))) / 100
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _check_idempotency_key(header_key: str | None, body_key: str | None) -> str | None:
    if header_key is not None and (
        not header_key or len(header_key) > 128 or any(c.isspace() for c in header_key)
    ):
        raise field_error(
            ["header", "Idempotency-Key"],
            "must be 1 to 128 characters without whitespace",
            "idempotency_key_invalid",
        )
    if header_key is not None and body_key is not None and header_key != body_key:
        raise validation_error(
            "The Idempotency-Key header and the body field idempotency_key differ.",
            [
                {
                    "loc": ["body", "idempotency_key"],
                    "msg": "differs from the Idempotency-Key header",
                    "type": "idempotency_key_mismatch",
                }
            ],
        )
    return header_key if header_key is not None else body_key


def request_hash(kind: str, params: dict) -> str:
    canonical = json.dumps([kind, params], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _replay(ctx: SandboxContext, caller: Caller, key: str, digest: str) -> dict | None:
    """The generation an earlier request with this key made, or None if there was none.

    Keys are scoped to the organization (one key, one job, whoever sends it), but a generation
    is readable only by the member who made it. So a key already used by *another* member is a
    409 even with the same body: replaying would hand over that member's generation (prompt,
    output URLs) to someone who may not read it, and a new job would break the key's scope.
    """
    row = idempotency.original(ctx.store, caller.org_id, key)
    if row is None:
        return None
    if row["member_id"] != caller.member_id:
        raise conflict(
            "This idempotency key was already used by another member of the organization; "
            "use a new key."
        )
    if row["request_hash"] != digest:
        raise conflict(
            "This idempotency key was already used with a different request body; "
            "use a new key for a different request."
        )
    gen = generation_rows.by_id(ctx.store, row["id"])
    return generation_json(gen, ctx.output_url, ctx.data_dir)


def submit(
    ctx: SandboxContext, caller: Caller, kind: str, params: dict, header_key: str | None
) -> SubmitResult:
    """``params``: the validated body without unset or null fields."""
    key = _check_idempotency_key(header_key, params.pop("idempotency_key", None))
    digest = request_hash(kind, params)
    if key is not None:
        original = _replay(ctx, caller, key, digest)
        if original is not None:
            return SubmitResult(original, False)

    try:
        markers = faults.parse_markers(params)
    except faults.MarkerError as exc:
        raise field_error(["body", exc.field], str(exc), "fault_marker") from None
    try:
        validated = catalog.validate_submit(kind, dict(params), OrgLookup(ctx.store, caller.org_id))
    except catalog.ValidationFailed as exc:
        raise validation_error(str(exc), list(exc.details)) from None

    model = catalog.get_model(validated.model_id) or {}
    org = accounts.org(ctx.store, caller.org_id)
    plans = model.get("plans")
    if plans is not None and org["plan"] not in plans:
        raise forbidden(
            f"The organization's plan {org['plan']!r} cannot use model {validated.model_id!r} "
            f"(plans: {', '.join(plans)})."
        )
    price = credits_after_discount(validated.list_credits, org["discount_percent"])
    amount = to_cents(price)

    cfg = ctx.config.current
    failure = faults.planned_failure(
        markers,
        validated.planned_failure,
        validated.model_id,
        cfg.failure_rates,
        cfg.failure_code,
        ctx.rng,
    )
    latency = faults.job_latency(kind, cfg.speed, markers, ctx.rng)
    generation_id = str(uuid.uuid4())
    b64 = kind == "image" and params.get("response_format") == "b64_json"
    slots = [
        _slot(ctx, validated, spec, generation_id, i, b64)
        for i, spec in enumerate(validated.outputs)
    ]
    job = Job(
        generation_id=generation_id,
        due_at=time.time() + latency,
        specs=list(validated.outputs),
        slots=slots,
        failure=failure,
        result_meta=validated.result_meta,
        org_id=caller.org_id,
    )
    prompt = params.get("prompt") or params.get("text") or ""
    if not isinstance(prompt, str):
        prompt = ""

    with ctx.store.write() as conn:
        raced = key is not None and idempotency.taken(conn, caller.org_id, key)
        if not raced:
            _check_funds(conn, caller, amount)
            now = utcnow()
            created_at = ctx.store.next_created_at(conn)
            cycle = billing_cycle(now)
            pending = generation_rows.NewGeneration(
                id=generation_id,
                org_id=caller.org_id,
                member_id=caller.member_id,
                key_id=caller.key_id,
                type=kind,
                model=validated.model_id,
                mode=validated.mode,
                prompt=prompt,
                created_at=created_at,
                credits_reserved=amount,
                idempotency_key=key,
                cycle=cycle,
                job_json=job.to_json(),
            )
            generation_rows.insert_pending(conn, pending)
            ledger.reserve(
                conn, caller.org_id, caller.member_id, generation_id, amount, cycle, created_at
            )
            if key is not None:
                idempotency.bind(conn, caller.org_id, key, digest, generation_id, created_at)
    if raced:
        # Another request with this key committed between our first look and our transaction.
        original = _replay(ctx, caller, key, digest)
        return SubmitResult(original, False)

    ctx.runner.schedule(job)
    generation = {
        "id": generation_id,
        "type": kind,
        "status": "pending",
        "model": validated.model_id,
        "prompt": prompt,
        "created_at": created_at,
        "completed_at": None,
        "credits_charged": None,
        "error": None,
        "idempotency_key": key,
        "outputs": [],
        "mode": validated.mode,
        "result_meta": None,
    }
    drop = markers.drop or ctx.config.take("drop_next_submits")
    return SubmitResult(generation, drop)


def _check_funds(conn, caller: Caller, amount: int) -> None:
    row = accounts.funds(conn, caller.org_id, caller.member_id)
    available, cap = row["available"], row["cap"]
    if amount > available:
        raise payment_required(
            f"Insufficient credits: this request needs {to_credits(amount):.2f} credits and the "
            f"organization has {to_credits(max(available, 0)):.2f} available."
        )
    if cap is not None:
        cycle = billing_cycle(utcnow())
        remaining = cap - ledger.member_used(conn, caller.member_id, cycle)
        if amount > remaining:
            raise payment_required(
                f"Member credit cap reached: this request needs {to_credits(amount):.2f} credits "
                f"and only {to_credits(max(remaining, 0)):.2f} remain of your member cap of "
                f"{to_credits(cap):.2f} for this billing cycle (resets at "
                f"{cycle_reset_at(cycle)})."
            )


def new_asset_id() -> str:
    return "asset_" + secrets.token_hex(12)


def _slot(ctx: SandboxContext, validated, spec, generation_id: str, index: int, b64: bool):
    asset_id = new_asset_id()
    ext = extension_for(spec.content_type)
    filename = f"{validated.model_id}-{generation_id[:8]}-{index + 1}{ext}"
    return OutputSlot(asset_id, filename, asset_path(ctx.data_dir, asset_id, ext), b64)

"""The submit flow shared by ``POST /v1/videos``, ``/v1/images`` and ``/v1/audio``.

Order of checks (each one before any credit moves):

1. idempotency key rules (header <= 128 chars; body field 1..128 non-whitespace; both given
   and different -> 422);
2. an existing idempotency record for the organization: same request -> the original
   generation, charged nothing; different request -> 409 ``conflict``;
3. fault markers, then the catalog's model rules (-> 422 with ``details``);
4. the organization's plan (-> 403), then balance and member cap (-> 402, with the needed and
   available credits in the message and as ``required_credits`` / ``available_credits``).

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
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from . import catalog, faults
from .context import SandboxContext
from .db import accounts, generations as generation_rows, idempotency, ledger
from .db.accounts import Caller
from .errors import conflict, field_error, forbidden, payment_required, validation_error
from .generations import generation_json
from .jobs import Job, OutputSlot, asset_path
from .lookup import OrgLookup
from .media import extension_for
from .units import billing_cycle, cycle_reset_at, parse_iso, to_cents, to_credits, utcnow


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


@dataclass
class _Draft:
    """A submit in the making: what the request said and what each step found out."""

    ctx: SandboxContext
    caller: Caller
    kind: str
    params: dict
    header_key: str | None
    key: str | None = None
    digest: str = ""
    markers: faults.Markers = field(default_factory=faults.Markers)
    validated: Any = None
    org: Any = None
    amount: int = 0
    job: Job | None = None
    #: the job's simulated latency, seconds from the generation's creation
    latency: float = 0.0


def _idempotency(d: _Draft) -> SubmitResult | None:
    """The key's rules; a key used before returns the original generation, charged nothing."""
    d.key = _check_idempotency_key(d.header_key, d.params.pop("idempotency_key", None))
    d.digest = request_hash(d.kind, d.params)
    if d.key is not None:
        original = _replay(d.ctx, d.caller, d.key, d.digest)
        if original is not None:
            return SubmitResult(original, False)
    return None


def _fault_markers(d: _Draft) -> None:
    try:
        d.markers = faults.parse_markers(d.params)
    except faults.MarkerError as exc:
        raise field_error(["body", exc.field], str(exc), "fault_marker") from None


def _model_rules(d: _Draft) -> None:
    lookup = OrgLookup(d.ctx.store, d.caller.org_id)
    try:
        d.validated = catalog.validate_submit(d.kind, dict(d.params), lookup)
    except catalog.ValidationFailed as exc:
        raise validation_error(str(exc), list(exc.details)) from None


def _plan(d: _Draft) -> None:
    """403 when the organization's plan may not use the model."""
    model_id = d.validated.model_id
    d.org = accounts.org(d.ctx.store, d.caller.org_id)
    plans = (catalog.get_model(model_id) or {}).get("plans")
    if plans is not None and d.org["plan"] not in plans:
        raise forbidden(
            f"The organization's plan {d.org['plan']!r} cannot use model {model_id!r} "
            f"(plans: {', '.join(plans)})."
        )


def _price(d: _Draft) -> None:
    d.amount = to_cents(credits_after_discount(d.validated.list_credits, d.org["discount_percent"]))


def _job(d: _Draft) -> None:
    """The job to run once committed: its outcome, latency and output slots."""
    ctx, validated, cfg = d.ctx, d.validated, d.ctx.config.current
    failure = faults.planned_failure(
        d.markers,
        validated.planned_failure,
        validated.model_id,
        cfg.failure_rates,
        cfg.failure_code,
        ctx.rng,
    )
    latency = d.latency = faults.job_latency(d.kind, cfg.speed, d.markers, ctx.rng)
    generation_id = str(uuid.uuid4())
    b64 = d.kind == "image" and d.params.get("response_format") == "b64_json"
    d.job = Job(
        generation_id=generation_id,
        due_at=time.time() + latency,
        specs=list(validated.outputs),
        slots=[
            _slot(ctx, validated, spec, generation_id, i, b64)
            for i, spec in enumerate(validated.outputs)
        ],
        failure=failure,
        result_meta=validated.result_meta,
        org_id=d.caller.org_id,
    )


# In order; each step may raise the request's error or answer it (a replayed key).
_STEPS = (_idempotency, _fault_markers, _model_rules, _plan, _price, _job)


def submit(
    ctx: SandboxContext, caller: Caller, kind: str, params: dict, header_key: str | None
) -> SubmitResult:
    """``params``: the validated body without unset or null fields."""
    d = _Draft(ctx, caller, kind, params, header_key)
    for step in _STEPS:
        answered = step(d)
        if answered is not None:
            return answered
    created_at = _commit(d)
    if created_at is None:
        # Another request with this key committed between our first look and our transaction.
        return SubmitResult(_replay(ctx, caller, d.key, d.digest), False)
    ctx.runner.schedule(d.job)
    drop = d.markers.drop or ctx.config.take("drop_next_submits")
    return SubmitResult(_pending(d, created_at), drop)


def _prompt(params: dict) -> str:
    prompt = params.get("prompt") or params.get("text") or ""
    return prompt if isinstance(prompt, str) else ""


def _commit(d: _Draft) -> str | None:
    """One transaction: funds checked, generation, reservation and idempotency record
    written. Returns the generation's created_at, or None when the key was used meanwhile."""
    caller, key, job = d.caller, d.key, d.job
    with d.ctx.store.write() as conn:
        if key is not None and idempotency.taken(conn, caller.org_id, key):
            return None
        _check_funds(conn, caller, d.amount)
        created_at = d.ctx.store.next_created_at(conn)
        # the latency counts from the creation time the generation states (the request may
        # have waited for this transaction), as a client measuring it from there would see
        job.due_at = max(job.due_at, parse_iso(created_at).timestamp() + d.latency)
        cycle = billing_cycle(utcnow())
        pending = generation_rows.NewGeneration(
            id=job.generation_id,
            org_id=caller.org_id,
            member_id=caller.member_id,
            key_id=caller.key_id,
            type=d.kind,
            model=d.validated.model_id,
            mode=d.validated.mode,
            prompt=_prompt(d.params),
            created_at=created_at,
            credits_reserved=d.amount,
            idempotency_key=key,
            cycle=cycle,
            job_json=job.to_json(),
        )
        generation_rows.insert_pending(conn, pending)
        ledger.reserve(
            conn, caller.org_id, caller.member_id, job.generation_id, d.amount, cycle, created_at
        )
        if key is not None:
            idempotency.bind(conn, caller.org_id, key, d.digest, job.generation_id, created_at)
    return created_at


def _pending(d: _Draft, created_at: str) -> dict:
    """The new generation as the submit answers it."""
    return {
        "id": d.job.generation_id,
        "type": d.kind,
        "status": "pending",
        "model": d.validated.model_id,
        "prompt": _prompt(d.params),
        "created_at": created_at,
        "completed_at": None,
        "credits_charged": None,
        "error": None,
        "idempotency_key": d.key,
        "outputs": [],
        "mode": d.validated.mode,
        "result_meta": None,
    }


def _check_funds(conn, caller: Caller, amount: int) -> None:
    row = accounts.funds(conn, caller.org_id, caller.member_id)
    available, cap = row["available"], row["cap"]
    if amount > available:
        raise payment_required(
            f"Insufficient credits: this request needs {to_credits(amount):.2f} credits and the "
            f"organization has {to_credits(max(available, 0)):.2f} available.",
            required=to_credits(amount),
            available=to_credits(max(available, 0)),
        )
    if cap is not None:
        cycle = billing_cycle(utcnow())
        remaining = cap - ledger.member_used(conn, caller.member_id, cycle)
        if amount > remaining:
            raise payment_required(
                f"Member credit cap reached: this request needs {to_credits(amount):.2f} credits "
                f"and only {to_credits(max(remaining, 0)):.2f} remain of your member cap of "
                f"{to_credits(cap):.2f} for this billing cycle (resets at "
                f"{cycle_reset_at(cycle)}).",
                required=to_credits(amount),
                available=to_credits(max(remaining, 0)),
            )


def new_asset_id() -> str:
    return "asset_" + secrets.token_hex(12)


def _slot(ctx: SandboxContext, validated, spec, generation_id: str, index: int, b64: bool):
    asset_id = new_asset_id()
    ext = extension_for(spec.content_type)
    filename = f"{validated.model_id}-{generation_id[:8]}-{index + 1}{ext}"
    return OutputSlot(asset_id, filename, asset_path(ctx.data_dir, asset_id, ext), b64)

"""Bulk synthetic history for benchmarks: ``POST /admin/orgs/{id}/seed-generations``.

Inserts N generations of one member in a single transaction, spaced ``interval_seconds`` apart
and ending before now (so later real submits sort newer), with the ledger entries a real run
would have made: one grant covering everything, then a reserve per generation, followed by a
charge (completed) or a refund (failed); pending ones keep their reservation and get a real
(tiny) job due an hour later, so no reservation is ever stuck. Completed outputs point at one
small shared asset per media kind, rendered once.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections import defaultdict
from datetime import timedelta

from . import catalog
from .context import SandboxContext
from .db import assets, generations as generation_rows, ledger
from .jobs import Job, OutputSlot, asset_path
from .media import extension_for, render
from .media.spec import OutputSpec
from .units import billing_cycle, iso, parse_iso, to_cents, utcnow

SMALL_SPECS = {
    "image": OutputSpec(media="image", content_type="image/png", width=64, height=64, text="seed"),
    "video": OutputSpec(
        media="video", content_type="video/mp4", width=64, height=64, duration_seconds=1.0
    ),
    "audio": OutputSpec(
        media="audio", content_type="audio/wav", duration_seconds=1.0, audio_kind="music"
    ),
}
PENDING_DELAY_SECONDS = 3600.0


def _prices(models: list[str]) -> dict[str, tuple[str, int]]:
    """model id -> (media kind, price in cents of its default request)."""
    out = {}
    for model_id in models:
        entry = catalog.get_model(model_id)
        if entry is None:
            raise ValueError(f"unknown model {model_id!r}")
        try:
            credits = catalog.estimate_from_query(model_id, {}).list_credits
        except Exception:  # a model whose price needs parameters: any plausible price will do
            credits = 1.0
        out[model_id] = (entry["type"], to_cents(credits))
    return out


def _shared_asset(ctx: SandboxContext, conn, org_id: str, member_id: str, kind: str) -> dict:
    spec = SMALL_SPECS[kind]
    asset_id = "asset_" + uuid.uuid4().hex[:24]
    ext = extension_for(spec.content_type)
    filename = f"seed-{kind}{ext}"
    path = asset_path(ctx.data_dir, asset_id, ext)
    out = render(spec, path)
    asset = assets.NewAsset(
        asset_id=asset_id,
        org_id=org_id,
        member_id=member_id,
        media=kind,
        content_type=out.content_type,
        filename=filename,
        size_bytes=out.size_bytes,
        path=path,
        width=out.width,
        height=out.height,
        duration_seconds=out.duration_seconds,
    )
    assets.insert_ready(conn, asset)
    return {
        "asset_id": asset_id,
        "content_type": out.content_type,
        "duration_seconds": out.duration_seconds,
        "width": out.width,
        "height": out.height,
        "filename": filename,
    }


def seed_generations(ctx: SandboxContext, org_id: str, body, start: str | None) -> dict:
    began = time.perf_counter()
    rng = random.Random(body.seed)
    models = body.models or [m["id"] for m in catalog.list_models()][:6]
    prices = _prices(models)
    now = utcnow()
    first = (
        parse_iso(start) if start else now - timedelta(seconds=body.count * body.interval_seconds)
    )
    gens, entries, jobs = [], [], []
    usage: dict[str, int] = defaultdict(int)
    totals = {"granted": 0, "reserved": 0, "charged": 0, "refunded": 0}
    counts = {"completed": 0, "failed": 0, "pending": 0}
    with ctx.store.write() as conn:
        shared = {
            kind: _shared_asset(ctx, conn, org_id, body.member_id, kind)
            for kind in {prices[m][0] for m in models}
        }
        for i in range(body.count):
            model_id = models[i % len(models)] if len(models) > 1 else models[0]
            kind, amount = prices[model_id]
            created = first + timedelta(seconds=i * body.interval_seconds)
            created_at = iso(created)
            roll = rng.random()
            if roll < body.completed_fraction:
                status = "completed"
            elif roll < body.completed_fraction + body.failed_fraction:
                status = "failed"
            else:
                status = "pending"
            counts[status] += 1
            gen_id = str(uuid.uuid4())
            cycle = billing_cycle(created)
            done_at = iso(created + timedelta(seconds=rng.uniform(3, 60)))
            totals["granted"] += amount
            entries.append((org_id, body.member_id, gen_id, "reserve", amount, created_at, None))
            outputs = job_json = None
            error = (None, None)
            charged = None
            if status == "completed":
                outputs = json.dumps([shared[kind]])
                charged = amount
                totals["charged"] += amount
                usage[cycle] += amount
                entries.append((org_id, body.member_id, gen_id, "charge", amount, done_at, None))
            elif status == "failed":
                error = ("provider_error", "Synthetic failure (seeded history).")
                totals["refunded"] += amount
                entries.append((org_id, body.member_id, gen_id, "refund", amount, done_at, None))
            else:
                totals["reserved"] += amount
                usage[cycle] += amount
                job = _pending_job(ctx, gen_id, kind, model_id)
                jobs.append(job)
                job_json = job.to_json()
            gens.append(
                (
                    gen_id, org_id, body.member_id, kind, model_id, "default", status,
                    f"seeded generation {i}", created_at,
                    None if status == "pending" else done_at,
                    amount, charged, error[0], error[1], cycle, job_json, outputs,
                )
            )  # fmt: skip
        ledger.grant(conn, org_id, totals["granted"], note=f"seed of {body.count} generations")
        generation_rows.insert_seeded(conn, gens)
        ledger.add_seeded(conn, org_id, entries, totals["reserved"], totals["charged"])
        for cycle, amount in usage.items():
            ledger.add_usage(conn, body.member_id, cycle, amount)
    ctx.store.forget_last_created()
    for job in jobs:
        ctx.runner.schedule(job)
    return {
        "inserted": body.count,
        "statuses": counts,
        "models": models,
        "seconds": round(time.perf_counter() - began, 3),
    }


def _pending_job(ctx: SandboxContext, gen_id: str, kind: str, model_id: str) -> Job:
    spec = SMALL_SPECS[kind]
    asset_id = "asset_" + uuid.uuid4().hex[:24]
    ext = extension_for(spec.content_type)
    slot = OutputSlot(
        asset_id, f"{model_id}-{gen_id[:8]}-1{ext}", asset_path(ctx.data_dir, asset_id, ext)
    )
    return Job(gen_id, time.time() + PENDING_DELAY_SECONDS, [spec], [slot])

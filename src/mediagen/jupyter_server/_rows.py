"""What the page sees of a generation, the credits and the spend: plain JSON, never a URL.

Output URLs are temporary and signed; the page gets each output's index and content type and
asks the server extension for the bytes (``/mediagen/api/media/<id>/<index>``), so no URL the
service made and no credential ever reaches the browser. Pure functions over the client's
models, so they are tested without a server.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

#: How long a job of each type usually takes, until this key's own finished jobs say otherwise.


def _iso(value: dt.datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def generation_row(
    gen: Any, forecast_seconds: float | None = None, estimate_credits: float | None = None
) -> dict[str, Any]:
    """A generation as the sidebar shows it (no output URL, no idempotency key); a running
    job carries its forecast time and, when its fields price it, the credits quoted for it."""
    error = getattr(gen, "error", None)
    return {
        "id": gen.id,
        "type": gen.type,
        "status": gen.status,
        "model": gen.model,
        "mode": gen.mode,
        "prompt": gen.prompt,
        "created_at": _iso(gen.created_at),
        "completed_at": _iso(gen.completed_at),
        "credits_charged": gen.credits_charged,
        "error": None if error is None else {"code": error.code, "message": error.message},
        "outputs": [
            {"index": i, "content_type": out.content_type, "duration_seconds": out.duration_seconds}
            for i, out in enumerate(gen.outputs)
        ],
        "forecast_seconds": forecast_seconds,
        "estimate_credits": estimate_credits,
    }


def forecasts(gens: Iterable[Any]) -> dict[str, float]:
    """Median seconds from creation to completion per model, over the finished jobs seen."""
    taken: dict[str, list[float]] = defaultdict(list)
    for gen in gens:
        if gen.status == "completed" and gen.created_at and gen.completed_at:
            taken[gen.model].append((gen.completed_at - gen.created_at).total_seconds())
    return {model: statistics.median(seconds) for model, seconds in taken.items()}


def forecast_for(gen: Any, by_model: Mapping[str, float]) -> float | None:
    """None when no job of its model finished here: a guess would show a bar near its end
    while the job has minutes to go, so the page shows an indeterminate bar instead."""
    return by_model.get(gen.model)


def spent_since(gens: Iterable[Any], since: dt.datetime) -> float:
    """Credits charged by the generations created at or after ``since``."""
    return round(
        sum(g.credits_charged or 0.0 for g in gens if g.created_at and g.created_at >= since), 2
    )


def start_of_today(now: dt.datetime | None = None) -> dt.datetime:
    """Midnight UTC today: the day the service's timestamps count in."""
    now = now or dt.datetime.now(dt.timezone.utc)
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def spend_table(gens: Iterable[Any]) -> dict[str, Any]:
    """Credits charged per day and per model (newest day first), and the total."""
    by_day: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for gen in gens:
        if gen.credits_charged and gen.created_at:
            day = gen.created_at.astimezone(dt.timezone.utc).date().isoformat()
            by_day[day][gen.model or "?"] += gen.credits_charged
    days: list[dict[str, Any]] = [
        {
            "day": day,
            "models": {m: round(c, 2) for m, c in sorted(models.items())},
            "total": round(sum(models.values()), 2),
        }
        for day, models in sorted(by_day.items(), reverse=True)
    ]
    return {"days": days, "total": round(sum(float(d["total"]) for d in days), 2)}


def credits_info(credits: Any, spent_today: float, limit: Any = None) -> dict[str, Any]:
    """The status bar's figures: balance, today's spend and what a spend limit leaves."""
    member = getattr(credits, "member_limit", None)
    return {
        "balance": credits.balance,
        "spent_today": spent_today,
        "limit_remaining": None if limit is None else limit.remaining,
        "member_limit_remaining": None if member is None else getattr(member, "remaining", None),
    }

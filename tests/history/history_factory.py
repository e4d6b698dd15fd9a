"""Raw generation dicts shaped like the API's JSON, and a list endpoint serving them.

Used by the tests that need no server (frame building, spend arithmetic, export, widgets); the
sandbox tests (``test_against_sandbox.py``) check the same code against the real service.
"""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Any

T0 = dt.datetime(2026, 3, 30, 22, 0, tzinfo=dt.timezone.utc)  # a Monday, near a month's end
_counter = itertools.count()


def iso(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def generation(
    *,
    type: str = "video",
    status: str = "completed",
    model: str = "vidra-2",
    prompt: str = "a lighthouse at dusk",
    created: dt.datetime | None = None,
    latency: float = 2.5,
    credits: float | None = 40.0,
    outputs: list[dict[str, Any]] | None = None,
    error: tuple[str, str] | None = None,
    idempotency_key: str | None = None,
    mode: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One generation as the API returns it, consistent with its status."""
    created = created or T0 + dt.timedelta(minutes=next(_counter))
    finished = status != "pending"
    if outputs is None:
        outputs = []
        if status == "completed":
            if type == "image":
                outputs = [{"width": 1024, "height": 1024, "duration_seconds": None}]
            elif type == "video":
                outputs = [{"width": 1280, "height": 720, "duration_seconds": 5.0}]
            else:
                outputs = [{"width": None, "height": None, "duration_seconds": 10.0}]
    for index, output in enumerate(outputs):
        output.setdefault("url", f"http://127.0.0.1/files/asset_{index:024x}/out?sig=x")
        output.setdefault("asset_id", f"asset_{uuid.uuid4().hex[:24]}")
        output.setdefault("content_type", None)
    return {
        "id": str(uuid.uuid4()),
        "type": type,
        "status": status,
        "model": model,
        "prompt": prompt,
        "created_at": iso(created),
        "completed_at": iso(created + dt.timedelta(seconds=latency)) if finished else None,
        "credits_charged": credits if status == "completed" else None,
        "error": {"code": error[0], "message": error[1]} if error else None,
        "idempotency_key": idempotency_key,
        "outputs": outputs,
        "mode": mode,
        **extra,
    }


class FakeListEndpoint:
    """``GET /v1/generations`` over a list: newest first, cursors, filters, page size bounds.

    Callable with the query dict, as ``generations_frame`` accepts for a page source.
    """

    def __init__(self, generations: list[dict[str, Any]]) -> None:
        self.generations = generations
        self.queries: list[dict[str, Any]] = []

    def __call__(self, query: dict[str, Any]) -> dict[str, Any]:
        self.queries.append(dict(query))
        limit = int(query.get("limit", 20))
        assert 1 <= limit <= 100, "limit out of range: the service answers 422"
        rows = sorted(self.generations, key=lambda g: (g["created_at"], g["id"]), reverse=True)
        for name in ("status", "type", "model"):
            if query.get(name) is not None:
                rows = [g for g in rows if g[name] == query[name]]
        if query.get("created_after") is not None:
            after = dt.datetime.fromisoformat(str(query["created_after"]).replace("Z", "+00:00"))
            rows = [g for g in rows if _parse(g["created_at"]) > after]
        start = int(query["after"]) if query.get("after") else 0
        page = rows[start : start + limit]
        more = start + limit < len(rows)
        return {"data": page, "next_cursor": str(start + limit) if more else None, "has_more": more}


def _parse(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def journal_record(
    gen: dict[str, Any],
    *,
    event: str = "submitted",
    estimate: float | None = None,
    discount: float = 0.0,
    with_id: bool = True,
    **summary: Any,
) -> dict[str, Any]:
    """A request-journal record (mediagen.local._journal's JSON lines shape) for ``gen``."""
    after = None if estimate is None else round(estimate * (1 - discount / 100), 2)
    return {
        "v": 1,
        "event": event,
        "at": gen["created_at"],
        "service": "http://127.0.0.1",
        "key_id": "key_test",
        "kind": gen["type"],
        "model": gen["model"],
        "mode": summary.pop("mode", None),
        "idempotency_key": gen["idempotency_key"],
        "generation_id": gen["id"] if with_id else None,
        "request": {},
        "summary": summary,
        "estimate": None
        if estimate is None
        else {
            "credits": estimate,
            "credits_after_discount": after,
            "discount_percent": discount,
            "model": gen["model"],
        },
        "status": gen["status"],
        "credits_charged": gen["credits_charged"],
    }

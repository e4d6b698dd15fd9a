"""Join the client's request journal onto history rows.

The API's generation does not carry the request's settings (tier, duration asked for,
references, the estimate shown), so the client journals every submit (``mediagen.local._journal``)
and the history joins those records here. The journal is optional: without it, or for
generations it never saw (made elsewhere), these columns are NA and ``journaled`` is False.

Records are JSON objects written in order: ``attempt`` (before sending; may lack the generation
id), ``submitted`` and ``finished``. For each generation the non-null values of all its records
are merged, later ones winning. A record without a generation id is matched through its
idempotency key, which the API echoes on the generation.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: journal summary field -> history column
_SUMMARY_FIELDS = {
    "tier": "tier",
    "resolution": "resolution",
    "quality": "quality",
    "variant": "variant",
    "duration_seconds": "requested_duration_s",
    "generate_image_count": "requested_count",
}
_ESTIMATE_FIELDS = {
    "credits": "estimate_credits",
    "credits_after_discount": "estimate_credits_after_discount",
    "discount_percent": "estimate_discount_percent",
}
REFERENCE_PREFIX = "refs_"


def journal_records(journal: Any) -> Iterable[Mapping[str, Any]]:
    """Records from a ``Journal`` (anything with ``records()``), a path, or an iterable of dicts."""
    if journal is None:
        return ()
    if hasattr(journal, "records"):
        return journal.records()
    if isinstance(journal, (str, os.PathLike)):
        from mediagen.local._journal import Journal  # the client's journal reader; no pandas there

        return Journal(journal).records()
    return journal


def _flatten(record: Mapping[str, Any]) -> dict[str, Any]:
    """The history columns one journal record provides (non-null values only)."""
    out: dict[str, Any] = {}
    for field in ("key_id", "mode"):
        value = record.get(field)
        if value is not None:
            out[field] = value
    summary = record.get("summary") or {}
    for field, column in _SUMMARY_FIELDS.items():
        value = summary.get(field)
        if value is not None:
            out[column] = value
    for field, count in (summary.get("reference_counts") or {}).items():
        if count is not None:
            out[REFERENCE_PREFIX + field] = count
    estimate = record.get("estimate") or {}
    for field, column in _ESTIMATE_FIELDS.items():
        value = estimate.get(field)
        if value is not None:
            out[column] = value
    return out


def journal_columns(
    journal: Any, ids: Sequence[str], idempotency_keys: Sequence[str | None]
) -> dict[str, list[Any]]:
    """Journal values aligned with the given rows: ``{column: [value or None per row]}``.

    Always holds ``journaled`` (bool per row); other columns appear when some record has them.
    """
    by_generation: dict[str, dict[str, Any]] = {}
    by_key: dict[str, dict[str, Any]] = {}
    for record in journal_records(journal):
        fields = _flatten(record)
        generation_id = record.get("generation_id")
        key = record.get("idempotency_key")
        if generation_id:
            by_generation.setdefault(generation_id, {}).update(fields)
        if key:
            by_key.setdefault(key, {}).update(fields)

    rows: list[dict[str, Any] | None] = []
    for generation_id, key in zip(ids, idempotency_keys, strict=True):
        found = by_generation.get(generation_id)
        from_key = by_key.get(key) if key else None
        if found is not None and from_key is not None:
            found = {**from_key, **found}
        rows.append(found if found is not None else from_key)

    columns: dict[str, list[Any]] = {"journaled": [row is not None for row in rows]}
    names = sorted({name for row in rows if row for name in row})
    for name in names:
        columns[name] = [row.get(name) if row else None for row in rows]
    return columns

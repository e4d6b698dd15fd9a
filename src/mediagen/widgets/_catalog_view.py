"""Catalog entries as the widgets need them: plain dicts, summaries and a text filter (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KINDS = ("image", "video", "audio")


def summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What the picker lists for one model: name, kind, modes, tiers, price summary."""
    return {
        "id": entry["id"],
        "name": entry.get("name") or entry["id"],
        "type": entry.get("type", ""),
        "audio_kind": entry.get("audio_kind"),
        "description": entry.get("description") or "",
        "price_summary": entry.get("price_summary") or "",
        "modes": [
            {"id": m.get("id"), "name": m.get("name") or m.get("id")}
            for m in entry.get("modes") or []
        ],
        "tiers": [t.get("id") for t in entry.get("tiers") or [] if t.get("id")],
        "plans": list(entry.get("plans") or []),
    }


def matches(item: Mapping[str, Any], kind: str, query: str) -> bool:
    """Kind filter plus every word of ``query`` in the model's names, description or modes."""
    if kind and item.get("type") != kind:
        return False
    words = query.lower().split()
    if not words:
        return True
    haystack = " ".join(
        [
            item["id"],
            item.get("name", ""),
            item.get("description", ""),
            item.get("type", ""),
            item.get("audio_kind") or "",
            *(m["id"] + " " + m["name"] for m in item.get("modes", [])),
        ]
    ).lower()
    return all(word in haystack for word in words)


def filter_summaries(
    items: Iterable[Mapping[str, Any]], kind: str, query: str
) -> list[dict[str, Any]]:
    return [dict(i) for i in items if matches(i, kind, query)]

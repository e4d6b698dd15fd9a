"""The seconds a request is billed for, read from its mode's ``price.duration`` sources.

Both the catalog (which turns a request into the estimate's query) and the local price (which
prices it on this machine) read a request's billable duration; it sits below both so neither
imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["stated_seconds"]


class _Unknown(Exception):
    """The price cannot be computed here; the message says what is missing."""


def _list_at(values: Mapping[str, Any], path: str) -> list:
    node: Any = values
    for step in path.split("."):
        node = node.get(step) if isinstance(node, Mapping) else None
    return node if isinstance(node, list) else []


def _field_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    value = values.get(source["field"])
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if number and value else None


def _summed_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    parts = [p for p in _list_at(values, source["sum"]) if isinstance(p, Mapping)]
    return float(sum(p.get(source["of"], 0) for p in parts)) if parts else None


def _ratio_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    top, bottom = (values.get(f) for f in source["divide"])
    return round(top / bottom, source.get("round", 3)) if top is not None and bottom else None


def _file_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    asset = values.get(source["asset"])
    if asset is None:
        return None
    if asset not in known:
        raise _Unknown(
            f"priced by the length of the {source['asset']} file (measured by the service)"
        )
    return float(known[asset])


def _default_seconds(source: Mapping, values: Mapping, known: Mapping) -> float | None:
    return float(source["default"])


#: How each kind of ``price.duration`` source gives seconds (None: it gives none here).
_DURATION_SOURCES = {
    "field": _field_seconds,
    "sum": _summed_seconds,
    "divide": _ratio_seconds,
    "asset": _file_seconds,
    "default": _default_seconds,
}


def _seconds(price: Mapping[str, Any], values: Mapping[str, Any], known: Mapping) -> float | None:
    """Billable seconds from the first ``price.duration`` source that applies and gives one."""
    for source in price.get("duration") or []:
        when = source.get("when") or {}
        if any(values.get(k) != v for k, v in when.items()):
            continue
        kind = next((k for k in _DURATION_SOURCES if k in source), None)
        seconds = _DURATION_SOURCES[kind](source, values, known) if kind else None
        if seconds is not None:
            return seconds
    return None


def stated_seconds(price: Mapping[str, Any], values: Mapping[str, Any]) -> float | None:
    """The billable seconds a request states itself; None when an input file's length (or,
    for a request naming none, the service's default) decides."""
    sources = [s for s in price.get("duration") or [] if "default" not in s]
    try:
        return _seconds({"duration": sources}, values, {})
    except _Unknown:
        return None

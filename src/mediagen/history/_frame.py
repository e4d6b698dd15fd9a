"""Build the history DataFrame straight from the list endpoint's raw JSON pages.

Why raw pages and not the client's typed ``Generation`` objects: 100k generations as model
objects cost several times the memory and time of the columns we need. Each page is reduced to
plain column lists as it arrives (its dicts are then dropped), and pandas arrays are built once
at the end, vectorised. With ``prefetch`` the next page is fetched on a helper thread while the
current one is reduced, so the kernel mostly waits on the server, not on itself (by default
only where that pays: see ``_fetch.prefetch_pays``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from mediagen.history import _schema
from mediagen.history._fetch import (
    LIST_FILTERS,
    iter_generation_pages,
    prefetch_pays,
    prefetched,
)
from mediagen.history._journal_join import journal_columns

_EMPTY: Mapping[str, Any] = {}
_USE_CLIENT_JOURNAL = object()


class _Columns:
    """Plain Python lists, one per raw field, filled page by page."""

    def __init__(self) -> None:
        self.id: list[Any] = []
        self.type: list[Any] = []
        self.status: list[Any] = []
        self.model: list[Any] = []
        self.mode: list[Any] = []
        self.prompt: list[Any] = []
        self.created_at: list[Any] = []
        self.completed_at: list[Any] = []
        self.credits_charged: list[Any] = []
        self.error_code: list[Any] = []
        self.error_message: list[Any] = []
        self.n_outputs: list[int] = []
        self.output_seconds: list[Any] = []
        self.width: list[Any] = []
        self.height: list[Any] = []
        self.idempotency_key: list[Any] = []

    def add(self, generations: list[Mapping[str, Any]]) -> None:
        """Reduce one page of raw generation dicts to column values."""
        g = generations
        self.id.extend([x.get("id") for x in g])
        self.type.extend([x.get("type") for x in g])
        self.status.extend([x.get("status") for x in g])
        self.model.extend([x.get("model") for x in g])
        self.mode.extend([x.get("mode") for x in g])
        self.prompt.extend([x.get("prompt") for x in g])
        self.created_at.extend([x.get("created_at") for x in g])
        self.completed_at.extend([x.get("completed_at") for x in g])
        self.credits_charged.extend([x.get("credits_charged") for x in g])
        self.idempotency_key.extend([x.get("idempotency_key") for x in g])
        errors = [x.get("error") or _EMPTY for x in g]
        self.error_code.extend([e.get("code") for e in errors])
        self.error_message.extend([e.get("message") for e in errors])
        outputs = [x.get("outputs") or () for x in g]
        self.n_outputs.extend(map(len, outputs))
        firsts = [o[0] if o else _EMPTY for o in outputs]
        self.width.extend([f.get("width") for f in firsts])
        self.height.extend([f.get("height") for f in firsts])
        self.output_seconds.extend([_seconds(o) if o else None for o in outputs])


def _seconds(outputs: Iterable[Mapping[str, Any]]) -> float | None:
    """Total media duration of a generation's outputs (None when none reports one: images)."""
    durations = [o.get("duration_seconds") for o in outputs]
    known = [d for d in durations if d is not None]
    return float(sum(known)) if known else None


def _times(values: list[Any]) -> pd.DatetimeIndex:
    return pd.DatetimeIndex(
        pd.to_datetime(values, utc=True, format="ISO8601"), dtype=_schema.DATETIME
    )


def _text(values: list[Any]) -> Any:
    return pd.array(values, dtype=_schema.string_dtype())


def _floats(values: list[Any]) -> np.ndarray:
    return np.array(values, dtype="float64")  # None -> NaN


def _to_frame(cols: _Columns, journal: Any) -> pd.DataFrame:
    created = _times(cols.created_at)
    completed = _times(cols.completed_at)
    status = _schema.categorical(cols.status, "status")
    credits = _floats(cols.credits_charged)
    # The spec: null while pending, final once completed; a failed job charges nothing, so
    # it is NaN too (not 0) and never counted as spend.
    credits[np.asarray(status != "completed")] = np.nan

    joined = journal_columns(journal, cols.id, cols.idempotency_key)
    journal_mode = joined.pop("mode", None)
    if journal_mode is not None:
        cols.mode = [
            m if m is not None else jm for m, jm in zip(cols.mode, journal_mode, strict=True)
        ]

    data: dict[str, Any] = {
        "id": _text(cols.id),
        "type": _schema.categorical(cols.type, "type"),
        "status": status,
        "model": _schema.categorical(cols.model, "model"),
        "mode": _schema.categorical(cols.mode, "mode"),
        "prompt": _text(cols.prompt),
        "created_at": created,
        "completed_at": completed,
        "latency_s": np.asarray((completed - created).total_seconds(), dtype="float64"),
        "credits_charged": credits,
        "error_code": _schema.categorical(cols.error_code, "error_code"),
        "error_message": _text(cols.error_message),
        "n_outputs": np.array(cols.n_outputs, dtype="int64"),
        "output_seconds": _floats(cols.output_seconds),
        "width": pd.array(cols.width, dtype="Int64"),
        "height": pd.array(cols.height, dtype="Int64"),
        "idempotency_key": _text(cols.idempotency_key),
    }
    data.update(_journal_data(joined, len(cols.id)))
    return pd.DataFrame(data)


def _journal_data(joined: dict[str, list[Any]], n_rows: int) -> dict[str, Any]:
    """The journal's columns of the frame, from ``journal_columns`` (consumed)."""
    data: dict[str, Any] = {"journaled": np.array(joined.pop("journaled"), dtype=bool)}
    for column, kind in _schema.JOURNAL_COLUMNS.items():
        if column == "journaled":
            continue
        values = joined.pop(column, None)
        data[column] = _build(values, column, kind, n_rows)
    for column in sorted(joined):  # refs_<field> reference counts
        data[column] = pd.array(joined[column], dtype="Int64")
    return data


def join_journal(frame: pd.DataFrame, journal: Any) -> pd.DataFrame:
    """``frame``'s service columns with the request journal's joined anew.

    The history store keeps only what the service said (it never changes); the journal is
    local and can grow, so it is joined each time a stored frame is read.
    """
    api = frame[[c for c in _schema.API_COLUMNS if c in frame.columns]].copy()
    keys = [None if pd.isna(k) else k for k in api["idempotency_key"].tolist()]
    joined = journal_columns(journal, api["id"].tolist(), keys)
    journal_mode = joined.pop("mode", None)
    if journal_mode is not None:
        fill = pd.Series(journal_mode, index=api.index, dtype=object)
        mode = api["mode"].astype(object).where(api["mode"].notna(), fill)
        api["mode"] = _schema.categorical(mode.tolist(), "mode")
    for column, values in _journal_data(joined, len(api)).items():
        api[column] = values
    return api


def _build(values: list[Any] | None, column: str, kind: str, n_rows: int) -> Any:
    """One journal column; ``values`` None means no record had it (all NA, built cheaply)."""
    if kind == _schema.CATEGORY:
        if values is None:
            return _schema.categorical(np.full(n_rows, None, dtype=object), column)
        return _schema.categorical([None if v is None else str(v) for v in values], column)
    if kind == "float64":
        return np.full(n_rows, np.nan) if values is None else _floats(values)
    if values is None:
        return pd.arrays.IntegerArray(np.zeros(n_rows, dtype="int64"), np.ones(n_rows, dtype=bool))
    return pd.array(values, dtype=kind)  # type: ignore[call-overload]


def frame_from_generations(
    generations: Iterable[Mapping[str, Any]], *, journal: Any = None
) -> pd.DataFrame:
    """The history frame of raw generation dicts (the JSON objects of the API)."""
    cols = _Columns()
    cols.add(list(generations))
    return _to_frame(cols, journal)


def frame_from_pages(pages: Iterable[Mapping[str, Any]], *, journal: Any = None) -> pd.DataFrame:
    """The history frame of list-endpoint pages (``{"data": [...], "next_cursor", ...}``)."""
    cols = _Columns()
    seen: set[str] = set()
    for page in pages:
        data = page.get("data") or []
        # Cursors stay valid while new generations arrive; a generation is never listed twice,
        # but guard anyway so a misbehaving server cannot double-count spend.
        fresh = [g for g in data if g.get("id") not in seen]
        seen.update(g.get("id") for g in fresh)
        cols.add(fresh)
    return _to_frame(cols, journal)


def _filter_params(filters: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(filters) - set(LIST_FILTERS)
    if unknown:
        raise TypeError(
            f"unknown filter(s) {sorted(unknown)}; the list endpoint filters by "
            f"{', '.join(LIST_FILTERS)}"
        )
    params: dict[str, Any] = {}
    for name, value in filters.items():
        if value is None:
            continue
        if isinstance(value, _dt.datetime):
            if value.tzinfo is None:
                raise ValueError(f"{name} must be timezone-aware (e.g. datetime.now(timezone.utc))")
            value = value.isoformat()
        elif isinstance(value, _dt.date):
            value = _dt.datetime.combine(value, _dt.time(), _dt.timezone.utc).isoformat()
        params[name] = value
    return params


def generations_frame(
    client: Any,
    *,
    journal: Any = _USE_CLIENT_JOURNAL,
    prefetch: bool | None = None,
    on_page: Callable[[Mapping[str, Any]], Any] | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """All generations of the client's key owner as a DataFrame, one row per generation.

    ``filters`` are those of ``client.generations.list``: ``status``, ``type``, ``model``,
    ``created_after`` (aware datetime, date or ISO string; strictly after). Pages are fetched at
    the largest page size and every cursor is followed, newest first.

    ``on_page(page)`` is called as each page arrives (progress displays). ``prefetch`` fetches
    the next page on a helper thread; None (default) does so where that pays (``prefetch_pays``).
    ``journal`` (default: the client's own request journal, if it has one) adds the request's
    settings and the estimate shown; pass ``None`` to skip it, or a ``Journal``, a path or an
    iterable of journal records.
    """
    params = _filter_params(filters)
    if journal is _USE_CLIENT_JOURNAL:
        journal = getattr(client, "journal", None)
    pages: Iterable[Mapping[str, Any]] = iter_generation_pages(client, params)
    if prefetch is None:
        prefetch = prefetch_pays(client)
    if prefetch:
        pages = prefetched(pages)
    if on_page is not None:  # a progress display, page by page
        pages = _reporting(pages, on_page)
    return frame_from_pages(pages, journal=journal)


def _reporting(pages: Iterable[Mapping[str, Any]], on_page: Callable[[Any], Any]):
    for page in pages:
        on_page(page)
        yield page


def update_frame(
    client: Any,
    frame: pd.DataFrame,
    *,
    journal: Any = _USE_CLIENT_JOURNAL,
    prefetch: bool | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """``frame`` brought up to date by fetching only what can have changed.

    Completed and failed generations are final (the spec), so only the pending ones and those
    created since can differ: this fetches generations created after the oldest pending one
    (or after the newest known one when none is pending) and replaces their rows. ``filters``
    must be those ``frame`` was built with. The result is ordered like the API: newest first.
    """
    if frame.empty:
        return generations_frame(client, journal=journal, prefetch=prefetch, **filters)
    pending = frame.loc[frame["status"] == "pending", "created_at"]
    since = pending.min() if len(pending) else frame["created_at"].max()
    # created_after is strictly after: step back a millisecond and de-duplicate by id instead.
    since = since - pd.Timedelta(milliseconds=1)
    scope = filters.get("created_after")
    if scope is not None and pd.to_datetime(scope, utc=True) > since:
        since = pd.to_datetime(scope, utc=True)
    fresh = generations_frame(
        client,
        journal=journal,
        prefetch=prefetch,
        **{**filters, "created_after": since.isoformat()},
    )
    kept = frame[~frame["id"].isin(fresh["id"])]
    merged = concat_history([fresh, kept])
    merged = merged.sort_values(["created_at", "id"], ascending=False, kind="stable")
    return merged.reset_index(drop=True)


def concat_history(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Stack history frames keeping every dtype (categoricals get the union of categories)."""
    frames = [f for f in frames if len(f.columns)]
    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    aligned = []
    for f in frames:
        f = f.copy(deep=False)
        for column in columns:
            if column not in f.columns:
                template = next(g[column] for g in frames if column in g.columns)
                f[column] = pd.Series(pd.NA, index=f.index).astype(template.dtype)
        aligned.append(f[columns])
    for column in columns:
        if isinstance(aligned[0][column].dtype, pd.CategoricalDtype):
            union = sorted({str(c) for f in aligned for c in f[column].cat.categories})
            for f in aligned:
                f[column] = f[column].cat.set_categories(union)
    merged = pd.concat(aligned, ignore_index=True)
    return _schema.apply_history_dtypes(merged)

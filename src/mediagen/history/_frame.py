"""Build the history DataFrame from the list endpoint's pages.

Why not the client's typed ``Generation`` objects: a million generations as model objects cost
several times the memory and time of the columns we need. Each page's body is read straight
into Arrow columns (``_pages``), the columns the history keeps are computed on those arrays,
and the DataFrame is made from them once, at the end. Each page is read on a helper thread
while the next one is fetched (``_fetch.iter_generation_pages``).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from mediagen.history import _schema
from mediagen.history._fetch import (
    LIST_FILTERS,
    PageSource,
    as_page,
    iter_generation_pages,
)
from mediagen.history._journal_join import journal_columns, journal_records
from mediagen.history._pages import ITEM, STORED_SCHEMA, Page, items_from_dicts, stored_table

_USE_CLIENT_JOURNAL = object()
#: Pages reduced together: big enough for Arrow to work in bulk, small enough that a long
#: history never holds its parsed pages (every field of every generation) all at once.
REDUCE_PAGES = 100


def _floats(values: list[Any]) -> np.ndarray:
    return np.array(values, dtype="float64")  # None -> NaN


def frame_from_table(table: pa.Table) -> pd.DataFrame:
    """The service's columns (``STORED_SCHEMA``, as the store keeps them) as a history frame.

    Category columns are made from Arrow's dictionary encoding and text stays in Arrow's
    buffers where this pandas keeps strings there, so no Python object is made per value.
    """
    table = table.select(STORED_SCHEMA.names).cast(STORED_SCHEMA)
    data: dict[str, Any] = {}
    for name in STORED_SCHEMA.names:
        column = table.column(name)
        kind = _schema.API_COLUMNS[name]
        if kind == _schema.CATEGORY:
            data[name] = _categorical(column, name)
        elif kind == _schema.STRING:
            data[name] = _schema.text_from_arrow(column)
        elif kind == "Int64":
            data[name] = pd.array(column.to_pandas(), dtype="Int64")
        else:
            data[name] = column.to_pandas()
    return pd.DataFrame(data)  # each column is built in its schema dtype: nothing to convert


def _categorical(column: pa.ChunkedArray, name: str) -> pd.Categorical:
    encoded = pc.dictionary_encode(column).combine_chunks()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)
    return _schema.categorical_from_codes(codes, encoded.dictionary.to_pylist(), name)


def _reduced(pages: Iterable[Page]) -> pa.Table:
    """The stored columns of ``pages``, reduced ``REDUCE_PAGES`` at a time; each generation
    once (cursors never list one twice, but a misbehaving server must not double-count)."""
    tables: list[pa.Table] = []
    batch: list[pa.Array] = []
    for page in pages:
        batch.append(page.items)
        if len(batch) >= REDUCE_PAGES:
            tables.append(stored_table(pa.chunked_array(batch, type=ITEM)))
            batch = []
    if batch or not tables:
        tables.append(stored_table(pa.chunked_array(batch, type=ITEM)))
    return first_of_each_id(pa.concat_tables(tables))


def first_of_each_id(table: pa.Table) -> pa.Table:
    """``table`` without the later rows of an id seen before (in C++: no Python per row)."""
    ids = table.column("id")
    if pc.count_distinct(ids, mode="all").as_py() == table.num_rows:
        return table
    keep = ~pd.Series(ids.to_pandas()).duplicated(keep="first").to_numpy()
    return table.filter(pa.array(keep))


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
    records = list(journal_records(journal))
    joined: dict[str, Any]
    if records:
        keys = api["idempotency_key"].astype(object)
        keys = keys.where(keys.notna(), None).tolist()
        joined = journal_columns(records, api["id"].tolist(), keys)
    else:  # nothing journaled (a new cache, or generations made elsewhere): no row to match
        joined = {"journaled": np.zeros(len(api), dtype=bool)}
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
    page = Page(items_from_dicts(generations), next_cursor=None)
    return join_journal(frame_from_table(_reduced([page])), journal)


def frame_from_pages(
    pages: Iterable[Page | Mapping[str, Any] | bytes], *, journal: Any = None
) -> pd.DataFrame:
    """The history frame of list-endpoint pages (``{"data": [...], "next_cursor", ...}`` as
    decoded JSON or as the body's bytes)."""
    return join_journal(frame_from_table(_reduced(as_page(p) for p in pages)), journal)


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
    client: PageSource,
    *,
    journal: Any = _USE_CLIENT_JOURNAL,
    on_page: Callable[[Page], Any] | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """All generations of the client's key owner as a DataFrame, one row per generation.

    ``filters`` are those of ``client.generations.list``: ``status``, ``type``, ``model``,
    ``created_after`` (aware datetime, date or ISO string; strictly after). Pages are fetched at
    the largest page size and every cursor is followed, newest first.

    ``on_page(page)`` is called as each page arrives (progress displays; ``len(page)`` is its
    number of generations).
    ``journal`` (default: the client's own request journal, if it has one) adds the request's
    settings and the estimate shown; pass ``None`` to skip it, or a ``Journal``, a path or an
    iterable of journal records.
    """
    params = _filter_params(filters)
    if journal is _USE_CLIENT_JOURNAL:
        journal = getattr(client, "journal", None)
    pages: Iterable[Page] = iter_generation_pages(client, params)
    if on_page is not None:  # a progress display, page by page
        pages = _reporting(pages, on_page)
    return frame_from_pages(pages, journal=journal)


def _reporting(pages: Iterable[Page], on_page: Callable[[Page], Any]) -> Iterable[Page]:
    for page in pages:
        on_page(page)
        yield page


def update_frame(
    client: PageSource,
    frame: pd.DataFrame,
    *,
    journal: Any = _USE_CLIENT_JOURNAL,
    **filters: Any,
) -> pd.DataFrame:
    """``frame`` brought up to date by fetching only what can have changed.

    Completed and failed generations are final (the spec), so only the pending ones and those
    created since can differ: this fetches generations created after the oldest pending one
    (or after the newest known one when none is pending) and replaces their rows. ``filters``
    must be those ``frame`` was built with. The result is ordered like the API: newest first.
    """
    if frame.empty:
        return generations_frame(client, journal=journal, **filters)
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

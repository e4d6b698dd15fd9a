"""The history frame's columns and their dtypes, in one place.

The frame is built from the API (``_frame``), read back from CSV (``export``) and checked in the
tests against this table, so "honest dtypes" means one definition: money and durations are
``float64`` (NaN when unknown), pixel sizes nullable ``Int64``, times ``datetime64[ns, UTC]``,
low-cardinality text ``category`` and free text the pandas string type of the running version
(``str`` on pandas 3, ``object`` on pandas 2).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3

#: Values the spec names for the enum columns: always present as categories, so counts of
#: "failed" read 0 rather than vanishing. Values the service adds later are kept too.
KNOWN_CATEGORIES: dict[str, tuple[str, ...]] = {
    "type": ("audio", "image", "video"),
    "status": ("completed", "failed", "pending"),
}

DATETIME = "datetime64[ns, UTC]"
STRING = "string-of-this-pandas"  # resolved by string_dtype()
CATEGORY = "category"

#: column -> dtype, in frame order. Columns from the API first, then from the request journal.
API_COLUMNS: dict[str, str] = {
    "id": STRING,
    "type": CATEGORY,
    "status": CATEGORY,
    "model": CATEGORY,
    "mode": CATEGORY,
    "prompt": STRING,
    "created_at": DATETIME,
    "completed_at": DATETIME,
    "latency_s": "float64",
    "credits_charged": "float64",
    "error_code": CATEGORY,
    "error_message": STRING,
    "n_outputs": "int64",
    "output_seconds": "float64",
    "width": "Int64",
    "height": "Int64",
    "idempotency_key": STRING,
}

JOURNAL_COLUMNS: dict[str, str] = {
    "journaled": "bool",
    "key_id": CATEGORY,
    "tier": CATEGORY,
    "resolution": CATEGORY,
    "quality": CATEGORY,
    "variant": CATEGORY,
    "requested_duration_s": "float64",
    "requested_count": "Int64",
    "estimate_credits": "float64",
    "estimate_credits_after_discount": "float64",
    "estimate_discount_percent": "float64",
}

#: Reference counts from the journal become one ``Int64`` column per request field,
#: e.g. ``refs_reference_images``; how many fields exist depends on the requests made.
REFERENCE_PREFIX = "refs_"

HISTORY_COLUMNS: dict[str, str] = {**API_COLUMNS, **JOURNAL_COLUMNS}

#: Text columns that the spec says are never null: an empty CSV field reads back as "" here,
#: and as NA everywhere else (CSV cannot tell the two apart by itself).
NEVER_NULL_TEXT = frozenset({"id", "prompt"})


def string_dtype() -> Any:
    """The dtype pandas itself gives a column of Python strings (``str`` or ``object``)."""
    return pd.StringDtype(na_value=np.nan) if PANDAS_3 else np.dtype(object)


def dtype_for(column: str) -> str | None:
    """The schema dtype name of a history column, or None for a column we do not know."""
    if column in HISTORY_COLUMNS:
        return HISTORY_COLUMNS[column]
    if column.startswith(REFERENCE_PREFIX):
        return "Int64"
    return None


def categorical(values: Any, column: str) -> pd.Categorical:
    """A categorical whose categories are the known values plus the observed ones, sorted.

    Sorting makes the categories a function of the data alone, so a frame written out and read
    back (or rebuilt from the API) has identical categories. Missing values (None/NaN) are NA.
    """
    array = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    return categorical_from_codes(codes, [str(v) for v in uniques], column)


def categorical_from_codes(codes: np.ndarray, observed: list[str], column: str) -> pd.Categorical:
    """``categorical`` of values given as codes into ``observed`` (-1 for missing)."""
    categories = sorted(set(KNOWN_CATEGORIES.get(column, ())) | set(observed))
    position = {name: i for i, name in enumerate(categories)}
    remap = np.array([position[name] for name in observed] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(remap[codes], categories=categories)


def text_from_arrow(column: Any) -> Any:
    """A free-text column from an Arrow string column, in this pandas' string type.

    pandas 3 keeps such text in Arrow buffers already (no copy per value); pandas 2 keeps
    Python objects, with None for missing.
    """
    if PANDAS_3:
        return pd.array(column, dtype=string_dtype())
    return np.array(column.to_pylist(), dtype=object)


def coerce(series: pd.Series, kind: str) -> pd.Series:
    """Convert one column to a schema dtype (used on fresh data and on CSV read-back)."""
    column = series.name
    if kind == CATEGORY:
        values = series.astype(object).where(series.notna(), None)
        return pd.Series(
            categorical(values.to_numpy(), str(column)), index=series.index, name=column
        )
    if kind == DATETIME:
        if isinstance(series.dtype, pd.DatetimeTZDtype):
            return series.dt.tz_convert("UTC").astype(DATETIME)
        parsed = pd.to_datetime(series, utc=True, format="ISO8601")
        return parsed.astype(DATETIME)
    if kind == STRING:
        target = string_dtype()
        if series.dtype == target and PANDAS_3:
            return series
        # pandas 2 keeps text as object: missing is always None there (never a float NaN)
        values = series.astype(object).where(series.notna(), None)
        return pd.Series(values.to_numpy(), index=series.index, name=column, dtype=target)
    if kind == "bool":
        return series.astype("bool")
    return series.astype(kind)


def apply_history_dtypes(frame: pd.DataFrame) -> pd.DataFrame:
    """Give every known column of ``frame`` its schema dtype; unknown columns are left alone."""
    out = frame.copy(deep=False)
    for column in out.columns:
        kind = dtype_for(str(column))
        if kind is not None:
            out[column] = coerce(out[column], kind)
    return out

"""Write a history frame out and read it back with every dtype intact.

Parquet keeps everything by itself (pandas' schema travels in the file, readable as is by
DuckDB, Dask or Spark). CSV keeps only text, so ``read_history_csv`` re-applies the history
schema (``_schema``): times are ISO 8601 with an explicit UTC offset, NA is an empty field,
categories are the known values plus those in the file. Free text the spec says is never null
(``id``, ``prompt``) reads back as ``""`` from an empty field; other text reads back as NA.
"""

from __future__ import annotations

import csv
import os
from typing import Any

import pandas as pd

from mediagen.history import _schema

PathLike = str | os.PathLike[str]


def to_parquet(frame: pd.DataFrame, path: PathLike, **kwargs: Any) -> None:
    """Write ``frame`` as Parquet (pyarrow), keeping categoricals, tz-aware times and Int64."""
    frame.to_parquet(path, engine="pyarrow", index=False, **kwargs)


def read_history_parquet(path: PathLike, **kwargs: Any) -> pd.DataFrame:
    """Read a Parquet file written by ``to_parquet`` (or any history frame) back."""
    frame = pd.read_parquet(path, engine="pyarrow", **kwargs)
    return _schema.apply_history_dtypes(frame)


def to_csv(frame: pd.DataFrame, path: PathLike, **kwargs: Any) -> None:
    """Write ``frame`` as CSV: times in ISO 8601 (UTC offset kept), NA as an empty field."""
    out = frame.copy(deep=False)
    for column in out.columns:
        if isinstance(out[column].dtype, pd.DatetimeTZDtype):
            text = out[column].dt.strftime("%Y-%m-%dT%H:%M:%S.%f%z")
            out[column] = text.where(out[column].notna(), None)
    out.to_csv(path, index=False, quoting=csv.QUOTE_MINIMAL, lineterminator="\n", **kwargs)


def read_history_csv(path: PathLike, **kwargs: Any) -> pd.DataFrame:
    """Read a CSV written by ``to_csv`` back into a history frame with its dtypes."""
    header = pd.read_csv(path, nrows=0).columns
    text_columns = {c for c in header if _schema.dtype_for(c) == _schema.STRING}
    frame = pd.read_csv(
        path,
        dtype={c: object for c in header if _schema.dtype_for(c) is not None},
        keep_default_na=False,  # "None", "NA", "null" are prompts too, not missing values
        na_values={c: [""] for c in header if c not in _schema.NEVER_NULL_TEXT},
        **kwargs,
    )
    for column in _schema.NEVER_NULL_TEXT & text_columns:
        frame[column] = frame[column].fillna("")
    for column in frame.columns:
        kind = _schema.dtype_for(column)
        if kind in ("float64", "int64", "Int64"):
            frame[column] = pd.to_numeric(frame[column]).astype(kind)
        elif kind == "bool":
            frame[column] = frame[column].map({"True": True, "False": False}).astype(bool)
    return _schema.apply_history_dtypes(frame)

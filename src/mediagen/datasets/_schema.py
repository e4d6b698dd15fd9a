"""The result columns of a table run, one name and pandas dtype each.

Every executor (one process, a Dask partition, a Spark task) returns exactly these columns, so
the parts of one run concatenate without a cast and a Parquet file written by one reads back
the same in another.
"""

from __future__ import annotations

RESULT_COLUMNS: dict[str, str] = {
    "generation_id": "string",
    "status": "string",
    "credits": "float64",
    "latency_s": "float64",
    "output": "string",
    # each output's content credentials as saved: signed, unsigned (newline-joined as output)
    "credentials": "string",
    "error_code": "string",
    "error": "string",
}

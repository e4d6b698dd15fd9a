"""Tables in, media out: one request per row of a DataFrame, priced whole before anything runs,
each row sent once with an idempotency key of its own, results as a frame.

``mediagen.datasets.plan(df, model=..., prompt="{caption}")`` checks and prices every row and
returns a :class:`Plan`; ``plan.run(...)`` runs it (``generate`` does both). The pieces the
cluster adapters share: ``RESULT_COLUMNS`` (the result frame's columns and dtypes),
``row_key`` (a row's key, the same in every process) and ``run_rows`` (the executor of any
subset of a plan's rows). Importing this package loads no pandas; its functions do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mediagen.datasets._col import col
from mediagen.datasets._keys import row_key
from mediagen.datasets._schema import RESULT_COLUMNS

if TYPE_CHECKING:
    from mediagen.datasets._fields import PlanError, PlanSpec
    from mediagen.datasets._plan import Plan, generate, plan
    from mediagen.datasets._rows import run_rows

__all__ = [
    "RESULT_COLUMNS",
    "Plan",
    "PlanError",
    "PlanSpec",
    "col",
    "generate",
    "plan",
    "row_key",
    "run_rows",
]

_LAZY = {
    "Plan": "mediagen.datasets._plan",
    "plan": "mediagen.datasets._plan",
    "generate": "mediagen.datasets._plan",
    "PlanError": "mediagen.datasets._fields",
    "PlanSpec": "mediagen.datasets._fields",
    "run_rows": "mediagen.datasets._rows",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

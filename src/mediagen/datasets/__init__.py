"""Tables in, media out: one request per row of a DataFrame, priced whole before anything runs,
each row sent once with an idempotency key of its own, results as a frame.

``mediagen.datasets.plan(df, model=..., prompt="{caption}")`` checks and prices every row and
returns a :class:`Plan`; ``plan.run(...)`` runs it (``generate`` does both). The pieces the
cluster adapters share: ``RESULT_COLUMNS`` (the result frame's columns and dtypes),
``row_key`` (a row's key, the same in every process) and ``run_rows`` (the executor of any
subset of a plan's rows). ``write_run_manifest(output_dir)`` gathers the parts of the run
manifest that a cluster run's partitions wrote into one ``run-manifest.json``, as a local run
writes it; ``check_run_manifest(path)`` audits a run manifest against its folder (what
``mediagen verify`` prints for one). Importing this package loads no pandas; its functions do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mediagen._lazy import lazy_exports
from mediagen.datasets._col import col
from mediagen.datasets._keys import row_key
from mediagen.datasets._schema import RESULT_COLUMNS

if TYPE_CHECKING:
    from mediagen.datasets._audit import check_run_manifest
    from mediagen.datasets._fields import PlanError, PlanSpec
    from mediagen.datasets._manifest_parts import write_run_manifest
    from mediagen.datasets._plan import Plan, generate, plan
    from mediagen.datasets._rows import run_rows

__all__ = [
    "RESULT_COLUMNS",
    "Plan",
    "PlanError",
    "PlanSpec",
    "check_run_manifest",
    "col",
    "generate",
    "plan",
    "row_key",
    "run_rows",
    "write_run_manifest",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Plan": "._plan",
        "plan": "._plan",
        "generate": "._plan",
        "PlanError": "._fields",
        "PlanSpec": "._fields",
        "run_rows": "._rows",
        "check_run_manifest": "._audit",
        "write_run_manifest": "._manifest_parts",
    },
)

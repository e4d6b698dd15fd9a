"""A table on a Dask cluster: ``mediagen.dask.generate(ddf, model=..., prompt="{caption}")``.

The same fields and result columns as ``df.mediagen.generate``. On the driver, at call time:
the columns the fields name are read, every row is checked and priced with the service's
estimates and the total is checked against ``budget=`` and any active budget or spend limit;
over it, :class:`~mediagen.BudgetExceededError` and no generation task exists. What comes back
is a lazy dask DataFrame (the ``ddf``'s index, the result columns), as every Dask operation
returns: ``.compute()``, ``.to_parquet(...)`` or ``.persist()`` runs it on the workers, so a
large table's results can go straight to storage without passing through the driver. Computing
it again is free: each row's idempotency key is derived from the run id, its label and its
request, so the service answers a key it has seen with the generation it already made — after a
worker died and the scheduler ran its partition again, or when the result is computed twice.

Each worker builds its own ``Client()`` from its environment: give the cluster
``MEDIAGEN_API_KEY`` (``LocalCluster(env={...})``, the worker pods' environment, or
``distributed.worker.env`` in Dask's config). The key is never put in the task graph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from mediagen._extras import require
from mediagen.datasets._cluster import ClusterRun, named_columns, plan_on_driver
from mediagen.datasets._schema import RESULT_COLUMNS

require("dask", "mediagen.dask")

if TYPE_CHECKING:
    import dask.dataframe as dd
    import pandas as pd

    from mediagen.client import Client
    from mediagen.datasets._plan import Plan


def generate(
    ddf: dd.DataFrame,
    *,
    model: str,
    budget: float | None = None,
    run_id: str | None = None,
    output_dir: str | None = None,
    client: Client | None = None,
    concurrency: int = 8,
    on_invalid: Literal["raise", "skip"] = "raise",
    **fields: Any,
) -> dd.DataFrame:
    """Plan and price ``ddf`` on the driver (refused whole when over budget), then a lazy dask
    DataFrame of results, one partition per partition of ``ddf``. ``client`` prices on the
    driver (default: ``Client()`` from the environment); the workers use their own.
    ``output_dir``: any fsspec URL (``s3://...``, ``memory://``) or a directory every worker
    can reach. A table with invalid rows is refused whole, naming them;
    ``on_invalid="skip"`` runs the rest and marks those ``skipped``. Each row's label is its
    index value, so the index must not repeat (``dd.read_csv`` numbers each partition from 0:
    ``ddf.set_index("id")`` first)."""
    run, _ = prepare(
        ddf,
        model=model,
        budget=budget,
        run_id=run_id,
        output_dir=output_dir,
        client=client,
        concurrency=concurrency,
        fields=fields,
        on_invalid=on_invalid,
    )
    return ddf.map_partitions(_run_partition, run, meta=_meta(ddf), align_dataframes=False)


def prepare(
    ddf: dd.DataFrame,
    *,
    model: str,
    budget: float | None,
    run_id: str | None,
    output_dir: str | None,
    client: Client | None,
    concurrency: int,
    fields: dict[str, Any],
    on_invalid: Literal["raise", "skip"] = "raise",
) -> tuple[ClusterRun, Plan]:
    """The driver's part: read the named columns, plan, price and check the budget."""
    from mediagen.datasets._fields import PlanError

    named = named_columns(list(ddf.columns), model, fields)
    frame = ddf[named].compute() if named else ddf.map_partitions(_no_columns).compute()
    if not frame.index.is_unique:
        repeated = list(dict.fromkeys(frame.index[frame.index.duplicated()]))[:5]
        raise PlanError(
            "each row needs a label of its own: its key is made from it, and this dask "
            "DataFrame's index repeats (dd.read_csv numbers each partition from 0): "
            'ddf.set_index("id") on a column that tells rows apart',
            [(label, "index", "this label is used by more than one row") for label in repeated],
        )
    made, run = plan_on_driver(
        frame,
        model=model,
        budget=budget,
        run_id=run_id,
        output_dir=output_dir,
        concurrency=concurrency,
        client=client,
        fields=fields,
        on_invalid=on_invalid,
    )
    return run, made


def _no_columns(part: pd.DataFrame) -> pd.DataFrame:
    return part.iloc[:, :0]


def _run_partition(part: pd.DataFrame, run: ClusterRun) -> pd.DataFrame:
    """One partition, on a worker."""
    return run.run(part)


def _meta(ddf: dd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    index = ddf._meta.index[:0]
    return pd.DataFrame(
        {name: pd.Series([], dtype=dtype, index=index) for name, dtype in RESULT_COLUMNS.items()},
        index=index,
    )

"""A table on Spark: ``mediagen.spark.generate(sdf, model=..., prompt="{caption}")``.

The same fields and result columns as ``df.mediagen.generate``, run with ``mapInPandas``. On the
driver, at call time: the columns the fields name are read, every row is checked and priced
with the service's estimates and the total is checked against ``budget=`` and any active
budget or spend limit; over it, :class:`~mediagen.BudgetExceededError` and no generation task is
launched. What comes back is a lazy Spark DataFrame, as every Spark transformation returns: an
action (``.toPandas()``, ``.write.parquet(...)``, ``.count()``) runs it on the executors.

A Spark DataFrame has no index, so a row's label (what its idempotency key is derived from,
with the run id and its request) is the ``index=`` column when given — an id such as ``sku``,
the same however the table is read again — else its position: the partition number and the
row's place in it (as ``monotonically_increasing_id``), the same for a retried task but not for
a table read with other partitions. The result has the label column first (``index=``'s name,
or ``row_id``), then the result columns. A task retried after it failed, or an action run twice,
sends the same keys, so the service charges nothing again.

With ``output_dir=``, each task writes its share of the run manifest beside its outputs
(``run-manifest.parts/``, named by the run and the batch's rows, so a retried task replaces its
parts); ``mediagen.spark.write_run_manifest(output_dir)`` after
the action gathers them into ``run-manifest.json``, as a local table run writes it.

Each executor builds its own ``Client()`` from its environment: set ``MEDIAGEN_API_KEY`` with
``spark.executorEnv.MEDIAGEN_API_KEY`` (or the executors' environment). The key is never in the
function Spark ships to them, the query plan, the results or the Parquet they are written to.
Spark itself writes every ``spark.executorEnv.*`` value into its event log (and shows it in its
UI) unless ``spark.redaction.regex`` matches the name, and its default regex does not match
``MEDIAGEN_API_KEY``: add ``api[._]?key`` to it when the session starts, e.g.
``.config("spark.redaction.regex", r"(?i)secret|password|token|access[.]?key|api[._]?key")``.
A Python worker killed mid-partition fails its task, and Spark runs the task again with the
same keys: every row is charged once.

One rate limit for all the tasks: the service limits the key, not the task. The tasks on one
machine share the key's pace through a file (every task of a ``local[N]`` session among them:
see :class:`~mediagen.client._requests.KeyGate`), and learn it together from the 429s. Spark
has no shared object a task could read the others' pace from, so on a machine other than the
driver's the budget is divided: the pace the driver knows when the run is planned (told with
``rate_limit=`` or learned) is split between the tasks that run at once (the session's default
parallelism), and the machine's tasks take their executor's part (``spark.executor.cores`` of
them) and adapt within it from the 429s they meet (nothing known, from a modest start: see
``ClusterPace.START``). A pace the driver was told is held fixed: each machine's part of it,
nothing learned past it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal, cast

from mediagen._extras import require
from mediagen.datasets._cluster import Asked, ClusterRun, named_columns, plan_on_driver, share_of
from mediagen.datasets._manifest_parts import write_run_manifest as write_run_manifest
from mediagen.datasets._schema import RESULT_COLUMNS

require("spark", "mediagen.spark")

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from mediagen.client import Client

#: the label column when the table has none of its own
ROW_ID = "row_id"
#: row_id = partition number << 33 | place in the partition (as monotonically_increasing_id)
_PARTITION_SHIFT = 33


def generate(
    sdf: DataFrame,
    *,
    model: str,
    budget: float | None = None,
    run_id: str | None = None,
    output_dir: str | None = None,
    client: Client | None = None,
    concurrency: int = 8,
    index: str | None = None,
    on_invalid: Literal["raise", "skip"] = "raise",
    **fields: Any,
) -> DataFrame:
    """Plan and price ``sdf`` on the driver (refused whole when over budget), then a lazy
    Spark DataFrame: the label column (``index`` or ``row_id``) and the result columns.
    ``client`` prices on the driver (default: ``Client()`` from the environment); the
    executors use their own. ``output_dir``: any fsspec URL or a directory every executor
    can reach. A table with invalid rows is refused whole, naming them; ``on_invalid="skip"``
    (with ``index=``, the labels the driver names them by) runs the rest and marks those
    ``skipped``."""
    if on_invalid == "skip" and index is None:
        raise ValueError(
            'on_invalid="skip" needs index=: the driver names the rows it skips by their label'
        )
    named = named_columns(list(sdf.columns), model, fields)
    if index is None:
        frame = cast("pd.DataFrame", sdf.select(*named).toPandas())
    else:  # the labels too: each must be one row's alone (its key is made from it)
        frame = cast("pd.DataFrame", sdf.select(*dict.fromkeys([index, *named])).toPandas())
        frame = frame.set_index(index, drop=index not in named)
    asked = Asked(model, budget, run_id, output_dir, concurrency, client, fields, on_invalid)
    _, run = plan_on_driver(frame, asked, labelled=index is not None)
    schema = result_schema(sdf, index)
    share = executor_share(sdf)

    def run_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        yield from _run_batches(batches, run, index, share)

    return sdf.mapInPandas(run_batches, schema=schema)


def executor_share(sdf: DataFrame) -> float:
    """An executor's part of the key's pace: its task slots over the tasks that run at once.
    In a ``local[N]`` session every task runs on the driver's machine and shares its pace
    file: the machine takes the whole pace."""
    context = sdf.sparkSession.sparkContext
    if str(context.master).startswith("local"):
        return 1.0
    slots = max(1, int(context.defaultParallelism))
    cores = int(context.getConf().get("spark.executor.cores", "1") or 1)
    return min(1.0, cores / slots)


def _run_batches(
    batches: Iterator[pd.DataFrame], run: ClusterRun, index: str | None, share: float = 1.0
) -> Iterator[pd.DataFrame]:
    """One task's batches, on an executor: each batch's rows run, labelled, in order. Each
    batch's part of the run manifest is placed by the partition number and the batch's first
    place in it."""
    import pandas as pd
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    base = partition << _PARTITION_SHIFT
    place = 0
    for batch in batches:
        if index is not None:
            batch = batch.set_index(index, drop=False)
        else:
            batch.index = pd.RangeIndex(base + place, base + place + len(batch), name=ROW_ID)
        where = f"{partition:06d}-{place:010d}"
        place += len(batch)
        out = run.run(batch, share_of(run.pace, share), where)
        out.insert(0, index or ROW_ID, batch.index.to_numpy())
        yield out.reset_index(drop=True)


def result_schema(sdf: DataFrame, index: str | None) -> StructType:
    """The label column (its own type, or a long ``row_id``), then ``RESULT_COLUMNS``."""
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    spark_type = {"string": StringType(), "float64": DoubleType()}
    label = sdf.schema[index] if index is not None else StructField(ROW_ID, LongType(), False)
    return StructType(
        [label]
        + [StructField(name, spark_type[dtype], True) for name, dtype in RESULT_COLUMNS.items()]
    )

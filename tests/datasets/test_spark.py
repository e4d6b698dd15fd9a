"""``mediagen.spark.generate`` on a real Spark session (``local[2,4]``) and the sandbox.

The tenant's key reaches the executors only through their environment (``cluster_fixtures``);
each test tells its rows apart by a fresh run id and reads the ledger before and after.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pandas as pd
import pytest
from cluster_fixtures import (  # noqa: F401  (fixtures)
    assert_one_charge_per_row,
    charge_entries,
    cluster_tenant_fixture,
    driver_fixture,
    spark_fixture,
)
from pyspark import TaskContext
from pyspark.sql.types import DoubleType, StringType

import mediagen
from mediagen.datasets import RESULT_COLUMNS

pytestmark = pytest.mark.cluster


def _table(spark, rows: int, partitions: int):
    df = pd.DataFrame(
        {
            "sku": [f"sku-{i:05d}" for i in range(rows)],
            "caption": [f"a kettle number {i}" for i in range(rows)],
            "style": ["watercolor", "ink"] * (rows // 2) + ["ink"] * (rows % 2),
        }
    )
    return spark.createDataFrame(df).repartition(partitions)


def test_each_row_runs_once_with_its_label_and_the_result_columns(
    spark, sandbox, cluster_tenant, driver, tmp_path
):
    sdf = _table(spark, 10, partitions=2)
    before = len(charge_entries(sandbox, cluster_tenant))
    result = mediagen.spark.generate(
        sdf,
        model="pixel-1",
        prompt="{caption}, {style} style",
        index="sku",
        run_id=f"spark-{uuid.uuid4()}",
        output_dir=str(tmp_path / "renders"),
        client=driver,
    )
    assert len(charge_entries(sandbox, cluster_tenant)) == before  # lazy: nothing ran yet
    spark_types = {"string": StringType(), "float64": DoubleType()}
    assert [(f.name, f.dataType) for f in result.schema.fields] == [
        ("sku", StringType()),
        *((name, spark_types[dtype]) for name, dtype in RESULT_COLUMNS.items()),
    ]
    out = result.toPandas()
    assert sorted(out["sku"]) == [f"sku-{i:05d}" for i in range(10)]
    assert (out["status"] == "completed").all()
    assert all(Path(path).exists() for path in out["output"])
    assert_one_charge_per_row(out, charge_entries(sandbox, cluster_tenant)[before:])


def test_a_task_failed_after_submitting_is_retried_and_pays_nothing_twice(
    spark, sandbox, cluster_tenant, driver, tmp_path
):
    rows = 40
    sdf = _table(spark, rows, partitions=4)
    before = len(charge_entries(sandbox, cluster_tenant))
    failed = tmp_path / "failed"
    result = mediagen.spark.generate(
        sdf, model="pixel-1", prompt="{caption}", run_id=f"spark-{uuid.uuid4()}", client=driver
    )
    schema = result.schema

    def fail_first_attempt(batches):
        """In the same task as the rows' submits (a narrow step Spark runs with them): the
        first attempt of partition 1 fails once every row of it has been sent and paid."""
        context = TaskContext.get()
        yield from batches
        if context.partitionId() == 1 and context.attemptNumber() == 0:
            failed.write_text(str(context.taskAttemptId()))
            raise RuntimeError("this task fails after submitting its rows")

    out = result.mapInPandas(fail_first_attempt, schema=schema).toPandas()
    assert failed.exists()  # the first attempt did fail; Spark ran the task again
    assert len(out) == rows
    assert out["row_id"].is_unique
    assert (out["status"] == "completed").all()
    assert_one_charge_per_row(out, charge_entries(sandbox, cluster_tenant)[before:])


def test_over_budget_the_table_is_refused_whole_before_any_task(
    spark, sandbox, cluster_tenant, driver
):
    sdf = _table(spark, 20, partitions=2)
    before = sandbox.admin.ledger(cluster_tenant.org_id)["entries"]
    with pytest.raises(mediagen.BudgetExceededError):  # 20 rows at 1 credit each
        mediagen.spark.generate(sdf, model="pixel-1", prompt="{caption}", budget=5, client=driver)
    assert sandbox.admin.ledger(cluster_tenant.org_id)["entries"] == before  # nothing reserved


def test_the_api_key_is_not_in_the_function_spark_ships_or_its_results(
    spark, sandbox, cluster_tenant, driver, monkeypatch
):
    """Spark pickles the Python function of ``mapInPandas`` (with all it closes over) and sends
    those bytes to every executor: the key must not be among them. (The executors' environment,
    ``spark.executorEnv``, is where it travels: the engine's config, not the task.)"""
    from pyspark.serializers import CloudPickleSerializer

    shipped: list[bytes] = []
    dumps = CloudPickleSerializer.dumps

    def recording_dumps(self, obj):
        data = dumps(self, obj)
        shipped.append(data)
        return data

    monkeypatch.setattr(CloudPickleSerializer, "dumps", recording_dumps)
    sdf = _table(spark, 4, partitions=1)
    result = mediagen.spark.generate(
        sdf, model="pixel-1", prompt="{caption}", run_id=f"spark-{uuid.uuid4()}", client=driver
    )
    assert any(b"_run_batches" in data for data in shipped)  # the function that runs the rows
    assert not any(cluster_tenant.api_key.encode() in data for data in shipped)
    out = result.toPandas()
    assert cluster_tenant.api_key not in out.to_csv()
    assert (out["status"] == "completed").all()


def test_an_invalid_row_is_skipped_by_its_label_when_asked(spark, sandbox, cluster_tenant, driver):
    df = pd.DataFrame(
        {
            "sku": [f"sku-{i:05d}" for i in range(5)],
            "caption": [f"a bowl number {i}" for i in range(5)],
            "resolution": ["1k", "1k", "9k", "1k", "1k"],  # 9k: not a resolution pixel-1 has
        }
    )
    sdf = spark.createDataFrame(df).repartition(2)
    fields = {"model": "pixel-1", "prompt": "{caption}", "resolution": mediagen.col("resolution")}
    with pytest.raises(ValueError, match="index="):  # the driver names skipped rows by label
        mediagen.spark.generate(sdf, client=driver, on_invalid="skip", **fields)
    before = len(charge_entries(sandbox, cluster_tenant))
    result = mediagen.spark.generate(
        sdf, client=driver, on_invalid="skip", index="sku", run_id=f"spark-{uuid.uuid4()}", **fields
    )
    out = result.toPandas().set_index("sku").sort_index()
    assert out.loc["sku-00002", "status"] == "skipped"
    assert "resolution" in out.loc["sku-00002", "error"]
    sent = out.drop(index="sku-00002")
    assert (sent["status"] == "completed").all()
    assert_one_charge_per_row(sent, charge_entries(sandbox, cluster_tenant)[before:])

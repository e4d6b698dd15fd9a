"""``mediagen.spark.generate`` on a real Spark session (``local[2,4]``) and the sandbox.

The tenant's key reaches the executors only through their environment (``cluster_fixtures``);
each test tells its rows apart by a fresh run id and reads the ledger before and after.
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import psutil
import pytest
from cluster_fixtures import (  # noqa: F401  (fixtures)
    assert_one_charge_per_row,
    assert_run_manifest_lists,
    charge_entries,
    cluster_tenant_fixture,
    driver_fixture,
    spark_fixture,
    spark_logs_fixture,
)
from pyspark import TaskContext
from pyspark.sql.types import DoubleType, StringType

import mediagen
from mediagen.datasets import RESULT_COLUMNS

pytestmark = pytest.mark.cluster


def _table(spark, rows: int, partitions: int, slow: float = 0.0):
    marker = f" [[slow:{slow}]]" if slow else ""
    df = pd.DataFrame(
        {
            "sku": [f"sku-{i:05d}" for i in range(rows)],
            "caption": [f"a kettle number {i}{marker}" for i in range(rows)],
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


def _reservations(sandbox, tenant) -> int:
    entries = sandbox.admin.ledger(tenant.org_id)["entries"]
    return sum(1 for e in entries if e["kind"] == "reserve")


def _python_workers_talking_to(port: int) -> list[psutil.Process]:
    """The Python worker processes under this session's JVM with a connection open to
    ``port``: the ones in the middle of a partition's requests."""
    javas = [p for p in psutil.Process().children(recursive=True) if p.name() == "java"]
    found = []
    for java in javas:
        for child in java.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(
                    c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
                    for c in child.net_connections(kind="tcp")
                ):
                    found.append(child)
    return found


def _lost_tasks(spark_logs) -> int:
    """Tasks the driver's log says were lost because their Python worker died."""
    lines = spark_logs.driver_log.read_text().splitlines()
    return sum("Lost task" in line and "Python worker exited" in line for line in lines)


def test_a_python_worker_killed_mid_partition_is_retried_and_pays_nothing_twice(
    spark, spark_logs, sandbox, cluster_tenant, driver
):
    """kill -9 of the Python worker running a partition, after its rows were sent and before
    they are done (each takes 2.5 s in the sandbox): Spark runs the task again, which sends
    the same keys, and every row is charged once."""
    rows = 40
    sdf = _table(spark, rows, partitions=2, slow=2.5)
    before = charge_entries(sandbox, cluster_tenant)
    reserved = _reservations(sandbox, cluster_tenant)
    lost = _lost_tasks(spark_logs)
    result = mediagen.spark.generate(
        sdf, model="pixel-1", prompt="{caption}", run_id=f"spark-{uuid.uuid4()}", client=driver
    )
    port = urlsplit(sandbox.base_url).port
    assert port is not None
    with ThreadPoolExecutor(max_workers=1) as pool:
        action = pool.submit(result.toPandas)
        deadline = time.monotonic() + 90
        workers: list[psutil.Process] = []
        while _reservations(sandbox, cluster_tenant) < reserved + 10 or not workers:
            assert time.monotonic() < deadline, "no partition started sending its rows"
            assert not action.done()
            workers = _python_workers_talking_to(port)
            time.sleep(0.05)
        victim = workers[0]
        victim.send_signal(signal.SIGKILL)  # mid-partition: rows sent, not yet done
        assert len(charge_entries(sandbox, cluster_tenant)) < len(before) + rows
        out = action.result(timeout=180)
    assert not victim.is_running()
    assert _lost_tasks(spark_logs) == lost + 1  # its task failed, and Spark ran it again
    assert len(out) == rows
    assert out["row_id"].is_unique
    assert (out["status"] == "completed").all()
    assert_one_charge_per_row(out, charge_entries(sandbox, cluster_tenant)[len(before) :])


def test_the_api_key_is_absent_from_sparks_logs_the_parquet_and_the_query_plan(
    spark, spark_logs, sandbox, cluster_tenant, driver, tmp_path
):
    """Where Spark writes what it did: the driver's log4j log, the JVM's stdout and stderr
    (where the Python workers' stderr goes), the event log, the query plan as ``explain``
    prints it, the Parquet files the results are written to, and the results."""
    key = cluster_tenant.api_key
    sdf = _table(spark, 6, partitions=2)
    result = mediagen.spark.generate(
        sdf, model="pixel-1", prompt="{caption}", index="sku", run_id=f"spark-{uuid.uuid4()}",
        client=driver,
    )  # fmt: skip

    def say_on_stderr(batches):
        """In the task with the rows: a line on the Python worker's stderr."""
        print("a line from a python worker", file=sys.stderr, flush=True)
        yield from batches

    shown = result.mapInPandas(say_on_stderr, schema=result.schema)
    plan = io.StringIO()
    with contextlib.redirect_stdout(plan):
        shown.explain(extended=True)
    assert "MapInPandas" in plan.getvalue()
    assert key not in plan.getvalue()

    before = len(charge_entries(sandbox, cluster_tenant))
    target = tmp_path / "results.parquet"
    shown.write.parquet(str(target))
    parts = sorted(target.glob("*.parquet"))
    assert parts
    assert not any(key.encode() in part.read_bytes() for part in parts)
    out = pd.read_parquet(target)
    assert sorted(out["sku"]) == [f"sku-{i:05d}" for i in range(6)]
    assert (out["status"] == "completed").all()
    assert key not in out.to_csv()
    assert_one_charge_per_row(out, charge_entries(sandbox, cluster_tenant)[before:])

    spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty()  # the event log is written
    texts = spark_logs.texts()
    assert "a line from a python worker" in texts[str(spark_logs.stdio)]
    assert "SparkContext" in texts[str(spark_logs.driver_log)]
    events = "".join(t for path, t in texts.items() if path.startswith(str(spark_logs.event_dir)))
    assert "spark.executorEnv.MEDIAGEN_API_KEY" in events  # there, with its value redacted
    assert [path for path, text in texts.items() if key in text] == []


def test_each_task_writes_its_manifest_part_and_a_retried_one_replaces_it(
    spark, sandbox, cluster_tenant, driver, tmp_path
):
    """Each task that saves to ``output_dir`` writes its part; the first attempt of partition
    1 fails after writing it, and the retried attempt, then a second action, replace it:
    ``write_run_manifest`` lists every row once, in the partitions' order."""
    out_dir = tmp_path / "renders"
    run_id = f"spark-{uuid.uuid4()}"
    before = len(charge_entries(sandbox, cluster_tenant))
    failed = tmp_path / "failed"
    result = mediagen.spark.generate(
        _table(spark, 6, partitions=2),
        model="pixel-1",
        prompt="{caption}",
        run_id=run_id,
        output_dir=str(out_dir),
        client=driver,
    )

    def fail_first_attempt(batches):
        context = TaskContext.get()
        yield from batches
        if context.partitionId() == 1 and context.attemptNumber() == 0:
            failed.write_text(str(context.taskAttemptId()))
            raise RuntimeError("this task fails after writing its manifest part")

    out = result.mapInPandas(fail_first_attempt, schema=result.schema).toPandas()
    assert failed.exists()  # Spark ran partition 1 again
    result.write.parquet(str(tmp_path / "results.parquet"))  # every task again
    assert len(list((out_dir / "run-manifest.parts").glob("*.json"))) == 2 + 1  # and the plan
    out = out.set_index("row_id")
    path = mediagen.spark.write_run_manifest(str(out_dir))
    manifest = assert_run_manifest_lists(path, out, run_id)
    assert manifest["rows_planned"] == 6  # counted: the labels are made on the executors
    assert [int(entry["row"]) for entry in manifest["rows"]] == sorted(out.index)
    assert len(charge_entries(sandbox, cluster_tenant)) == before + len(out)  # paid once

"""Real local clusters for the cluster tests: one Dask ``LocalCluster`` and one Spark session.

Each is session-scoped (a cluster takes seconds to start) and imported by the one test module
that uses it (``from cluster_fixtures import dask_client_fixture``; its name in a test is
``dask_client``). Both are given the tenant's API key through the workers' environment only, the
way a user's cluster gets it: ``LocalCluster(env=...)`` (which a restarted worker keeps) and the
executors' inherited environment plus ``spark.executorEnv``. The key is never an argument of a
task, so a check of the task graph can find it missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import mediagen
from mediagen.datasets._audit import check_run_manifest


@pytest.fixture(scope="session", name="cluster_tenant")
def cluster_tenant_fixture(sandbox) -> Any:
    """One tenant for the whole cluster session: its key is in the workers' environment, and
    each test tells its rows apart by a fresh run id (and reads the ledger per generation)."""
    return sandbox.new_tenant(balance=100_000.0)


def _worker_env(sandbox, tenant) -> dict[str, str]:
    return {
        "MEDIAGEN_API_KEY": tenant.api_key,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }


@pytest.fixture(scope="session", name="dask_client")
def dask_client_fixture(sandbox, cluster_tenant) -> Iterator[Any]:
    """A ``distributed.Client`` on a real ``LocalCluster``: 2 worker processes under nannies
    (a killed worker is restarted and its tasks computed again)."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=2,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
        env=_worker_env(sandbox, cluster_tenant),
    )
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


#: what Spark redacts from its event log and UI: its default, and names of API keys
REDACTION = r"(?i)secret|password|token|access[.]?key|api[._]?key"


@dataclass(frozen=True)
class SparkLogs:
    """Where the session's own records go: the driver's log4j log, the JVM's stdout and
    stderr (the Python workers' stderr is copied there) and the event log directory."""

    driver_log: Path
    stdio: Path
    event_dir: Path

    def texts(self) -> dict[str, str]:
        """Every file of them, by path (the event log uncompressed: searchable as text)."""
        files = [self.driver_log, self.stdio, *sorted(self.event_dir.rglob("*"))]
        return {str(f): f.read_text(errors="replace") for f in files if f.is_file()}


@pytest.fixture(scope="session", name="spark_logs")
def spark_logs_fixture(tmp_path_factory) -> SparkLogs:
    root = tmp_path_factory.mktemp("spark-logs")
    (root / "events").mkdir()
    return SparkLogs(root / "driver.log", root / "stdio.log", root / "events")


@contextmanager
def _stdio_to(path: Path) -> Iterator[None]:
    """File descriptors 1 and 2 point at ``path`` while the JVM starts (it keeps them)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with path.open("ab") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        for fd, old in zip((1, 2), saved, strict=True):
            os.dup2(old, fd)
            os.close(old)


def _log4j_to(path: Path) -> Path:
    """A log4j2 configuration sending every INFO line of the driver to ``path``."""
    config = path.with_suffix(".properties")
    config.write_text(
        "rootLogger.level = info\n"
        "rootLogger.appenderRef.file.ref = file\n"
        "appender.file.type = File\n"
        "appender.file.name = file\n"
        f"appender.file.fileName = {path}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = %d %p %c: %m%n\n"
    )
    return config


@pytest.fixture(scope="session", name="spark")
def spark_fixture(sandbox, cluster_tenant, spark_logs) -> Iterator[Any]:
    """A ``SparkSession`` on ``local[2,4]``: 2 task threads, up to 4 attempts per task (plain
    ``local[2]`` never retries a failed task). The Python workers run this interpreter. Its
    driver log, stdout and stderr and event log go to ``spark_logs``; the event log redacts
    ``spark.executorEnv.MEDIAGEN_API_KEY`` only because ``spark.redaction.regex`` names API keys
    (Spark's default regex does not, and the key would be in it several times)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    log4j = _log4j_to(spark_logs.driver_log)
    builder = (
        SparkSession.builder.master("local[2,4]")
        .appName("mediagen-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
        .config("spark.eventLog.enabled", "true")
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.dir", spark_logs.event_dir.as_uri())
        .config("spark.redaction.regex", REDACTION)
    )
    for name, value in _worker_env(sandbox, cluster_tenant).items():
        builder = builder.config(f"spark.executorEnv.{name}", value)
    with _stdio_to(spark_logs.stdio):
        session = builder.getOrCreate()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(name="driver")
def driver_fixture(sandbox, cluster_tenant) -> Iterator[Any]:
    """The driver's client: prices the table (the workers and executors make their own)."""
    with mediagen.Client(api_key=cluster_tenant.api_key, base_url=sandbox.base_url) as client:
        yield client


def charge_entries(sandbox, tenant) -> list[dict]:
    """The tenant's ledger charges, oldest first (a test slices off those made before it)."""
    return [e for e in sandbox.admin.ledger(tenant.org_id)["entries"] if e["kind"] == "charge"]


def assert_one_charge_per_row(out: Any, new_charges: list[dict]) -> None:
    """Every result row's generation was charged exactly once, and the charges add up to the
    result's ``credits``."""
    per_generation = Counter(e["generation_id"] for e in new_charges)
    assert out["generation_id"].is_unique
    assert set(per_generation) == set(out["generation_id"])
    assert set(per_generation.values()) == {1}
    assert sum(e["amount"] for e in new_charges) == pytest.approx(out["credits"].sum())


def assert_run_manifest_lists(manifest_path: str, out: Any, run_id: str) -> dict:
    """The gathered ``run-manifest.json`` lists each result row once (``out``: its labels as
    index), with its generation, its charge, its outputs and each sidecar's SHA-256, and its
    audit finds nothing wrong; the manifest, read back."""
    manifest = json.loads(Path(manifest_path).read_text())
    assert manifest["run_id"] == run_id
    labels = [entry["row"] for entry in manifest["rows"]]
    assert sorted(labels) == sorted(str(label) for label in out.index)  # each row, once
    assert manifest["credits_charged"] == pytest.approx(out["credits"].sum())
    by_row = {str(label): row for label, row in out.iterrows()}
    for entry in manifest["rows"]:
        row = by_row[entry["row"]]
        assert entry["generation_id"] == row["generation_id"]
        assert entry["credits_charged"] == row["credits"]
        [saved] = entry["outputs"]
        assert saved["output"] == row["output"]
        sidecar = Path(row["output"] + ".mediagen.json").read_bytes()
        assert saved["manifest_sha256"] == hashlib.sha256(sidecar).hexdigest()
    assert check_run_manifest(manifest_path) == []  # the folder holds what it lists, no more
    return manifest

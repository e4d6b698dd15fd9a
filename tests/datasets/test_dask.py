"""``mediagen.dask.generate`` on a real ``LocalCluster`` (2 worker processes) and the sandbox.

The tenant's key reaches the workers only through their environment (``cluster_fixtures``);
each test tells its rows apart by a fresh run id and reads the ledger before and after.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import time
import uuid
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
import pytest
from cluster_fixtures import (  # noqa: F401  (fixtures)
    assert_one_charge_per_row,
    assert_run_manifest_lists,
    charge_entries,
    cluster_tenant_fixture,
    dask_client_fixture,
    driver_fixture,
)

import mediagen
from mediagen.datasets import RESULT_COLUMNS, PlanError
from mediagen.datasets._audit import check_run_manifest

pytestmark = pytest.mark.cluster


def _table(rows: int, partitions: int, slow: float = 0.0) -> dd.DataFrame:
    marker = f" [[slow:{slow}]]" if slow else ""
    df = pd.DataFrame(
        {
            "sku": [f"sku-{i:05d}" for i in range(rows)],
            "caption": [f"a teapot number {i}{marker}" for i in range(rows)],
            "style": ["watercolor", "ink"] * (rows // 2) + ["ink"] * (rows % 2),
        }
    ).set_index("sku")
    return dd.from_pandas(df, npartitions=partitions)


def test_each_row_runs_once_with_the_result_columns_and_dtypes(
    dask_client, sandbox, cluster_tenant, driver, tmp_path
):
    ddf = _table(12, partitions=3)
    before = len(charge_entries(sandbox, cluster_tenant))
    result = mediagen.dask.generate(
        ddf,
        model="pixel-1",
        prompt="{caption}, {style} style",
        run_id=f"dask-{uuid.uuid4()}",
        output_dir=str(tmp_path / "renders"),
        client=driver,
    )
    assert isinstance(result, dd.DataFrame)  # lazy: nothing ran yet
    assert len(charge_entries(sandbox, cluster_tenant)) == before
    out = result.compute()
    assert list(out.columns) == list(RESULT_COLUMNS)
    assert dict(out.dtypes.astype(str)) == RESULT_COLUMNS
    assert list(out.index) == list(ddf.index.compute())
    assert (out["status"] == "completed").all()
    assert all(os.path.exists(path) for path in out["output"])
    assert_one_charge_per_row(out, charge_entries(sandbox, cluster_tenant)[before:])
    again = result.compute()  # computed twice: read back, paid once
    assert list(again["generation_id"]) == list(out["generation_id"])
    assert len(charge_entries(sandbox, cluster_tenant)) == before + len(out)


def test_a_worker_killed_mid_partition_pays_nothing_twice(
    dask_client, sandbox, cluster_tenant, driver
):
    rows = 80
    ddf = _table(rows, partitions=4, slow=0.25)
    before = charge_entries(sandbox, cluster_tenant)
    result = mediagen.dask.generate(
        ddf,
        model="pixel-1",
        prompt="{caption}",
        run_id=f"dask-{uuid.uuid4()}",
        client=driver,
        concurrency=8,
    )
    pids = dask_client.run(os.getpid)
    future = dask_client.compute(result)
    deadline = time.monotonic() + 60
    while len(charge_entries(sandbox, cluster_tenant)) < len(before) + 10:  # rows sent and paid
        assert time.monotonic() < deadline
        assert not future.done()
        time.sleep(0.05)
    busy = [worker for worker, tasks in dask_client.processing().items() if tasks]
    assert busy, "every partition ended before the kill"
    victim = pids[busy[0]]
    os.kill(victim, signal.SIGKILL)  # mid-partition: its rows are sent, some not yet done
    out = future.result(timeout=120)
    dask_client.wait_for_workers(2, timeout=60)
    assert victim not in dask_client.run(os.getpid).values()  # its nanny started a new one
    assert len(out) == rows
    assert (out["status"] == "completed").all()
    assert_one_charge_per_row(out, charge_entries(sandbox, cluster_tenant)[len(before) :])


def test_over_budget_the_table_is_refused_whole_before_any_task(
    dask_client, sandbox, cluster_tenant, driver
):
    ddf = _table(20, partitions=2)
    before = sandbox.admin.ledger(cluster_tenant.org_id)["entries"]
    with pytest.raises(mediagen.BudgetExceededError):  # 20 rows at 1 credit each
        mediagen.dask.generate(ddf, model="pixel-1", prompt="{caption}", budget=5, client=driver)
    assert sandbox.admin.ledger(cluster_tenant.org_id)["entries"] == before  # nothing reserved


def test_the_api_key_is_nowhere_in_the_graph_the_results_or_the_logs(
    dask_client, sandbox, cluster_tenant, driver
):
    ddf = _table(6, partitions=2)
    result = mediagen.dask.generate(
        ddf, model="pixel-1", prompt="{caption}", run_id=f"dask-{uuid.uuid4()}", client=driver
    )
    key = cluster_tenant.api_key.encode()
    assert key not in pickle.dumps(dict(result.__dask_graph__()))
    out = result.compute()
    assert cluster_tenant.api_key not in out.to_csv()
    logs = [dask_client.get_scheduler_logs(), *dask_client.get_worker_logs().values()]
    assert cluster_tenant.api_key not in repr(logs)
    assert (out["status"] == "completed").all()


def _with_one_bad_row(rows: int) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "sku": [f"sku-{i:05d}" for i in range(rows)],
            "caption": [f"a vase number {i}" for i in range(rows)],
            "resolution": ["1k"] * rows,
        }
    ).set_index("sku")
    df.loc["sku-00002", "resolution"] = "9k"  # not a resolution pixel-1 has
    return df


def test_an_invalid_row_refuses_the_table_naming_it_or_is_skipped_when_asked(
    dask_client, sandbox, cluster_tenant, driver
):
    ddf = dd.from_pandas(_with_one_bad_row(6), npartitions=2)
    fields = {"model": "pixel-1", "prompt": "{caption}", "resolution": mediagen.col("resolution")}
    before = sandbox.admin.ledger(cluster_tenant.org_id)["entries"]
    with pytest.raises(PlanError, match="sku-00002") as refused:
        mediagen.dask.generate(ddf, client=driver, **fields)
    assert [p[:2] for p in refused.value.problems] == [("sku-00002", "resolution")]
    assert sandbox.admin.ledger(cluster_tenant.org_id)["entries"] == before

    run_id = f"dask-{uuid.uuid4()}"
    out = mediagen.dask.generate(
        ddf, client=driver, on_invalid="skip", run_id=run_id, **fields
    ).compute()
    assert list(out.index) == [f"sku-{i:05d}" for i in range(6)]
    assert out.loc["sku-00002", "status"] == "skipped"
    assert "resolution" in out.loc["sku-00002", "error"]
    assert out.loc["sku-00002", "credits"] == 0.0
    assert dict(out.dtypes.astype(str)) == RESULT_COLUMNS
    sent = out.drop(index="sku-00002")
    assert (sent["status"] == "completed").all()
    assert_one_charge_per_row(
        sent, charge_entries(sandbox, cluster_tenant)[len(_charges_in(before)) :]
    )


def _charges_in(entries: list[dict]) -> list[dict]:
    return [e for e in entries if e["kind"] == "charge"]


def test_an_index_that_repeats_across_partitions_is_refused_with_what_to_do(
    dask_client, sandbox, cluster_tenant, driver
):
    parts = [pd.DataFrame({"caption": [f"a cup {p}-{i}" for i in range(3)]}) for p in range(2)]
    ddf = dd.concat([dd.from_pandas(part, npartitions=1) for part in parts])  # 0, 1, 2 twice
    before = sandbox.admin.ledger(cluster_tenant.org_id)["entries"]
    with pytest.raises(PlanError, match=r"set_index") as refused:
        mediagen.dask.generate(ddf, model="pixel-1", prompt="{caption}", client=driver)
    assert {p[0] for p in refused.value.problems} == {0, 1, 2}
    assert sandbox.admin.ledger(cluster_tenant.org_id)["entries"] == before


def _saved_in_memory(root: str) -> list[str]:
    """The files under ``root`` in this worker's fsspec memory filesystem."""
    import fsspec

    memory = fsspec.filesystem("memory")
    return [f"memory://{path.lstrip('/')}" for path in memory.find(root)]


def test_outputs_go_to_an_fsspec_url_from_each_worker(dask_client, driver):
    root = f"memory://renders-{uuid.uuid4().hex}"
    out = mediagen.dask.generate(
        _table(4, partitions=2), model="pixel-1", prompt="{caption}", output_dir=root, client=driver
    ).compute()
    assert (out["status"] == "completed").all()
    assert all(path.startswith(root + "/") for path in out["output"])
    on_workers = dask_client.run(_saved_in_memory, root.removeprefix("memory://"))
    saved = {path for paths in on_workers.values() for path in paths}
    parts = {path for path in saved if path.startswith(root + "/run-manifest.parts/")}
    assert len(parts) == 2  # each partition's share of the run manifest, beside its outputs
    # each output beside its content credentials, and the run's files nowhere else
    assert saved - parts == set(out["output"]) | {path + ".mediagen.json" for path in out["output"]}


def test_each_partition_writes_its_manifest_part_and_they_gather_into_one_run_manifest(
    dask_client, sandbox, cluster_tenant, driver, tmp_path
):
    """Each partition that saves to ``output_dir`` writes its part; ``write_run_manifest``
    lists every row once, in the table's order. Computed again, with a partition alone, or
    with other partitions under the same run id: parts are replaced, never added to."""
    out_dir = tmp_path / "renders"
    parts = out_dir / "run-manifest.parts"
    run_id = f"dask-{uuid.uuid4()}"
    ddf = _table(6, partitions=3)
    before = len(charge_entries(sandbox, cluster_tenant))
    fields = {"model": "pixel-1", "prompt": "{caption}", "run_id": run_id, "client": driver}
    fields["output_dir"] = str(out_dir)
    result = mediagen.dask.generate(ddf, **fields)
    out = result.compute()
    assert sorted(p.name.endswith("-plan.json") for p in parts.glob("*.json")) == [0, 0, 0, 1]
    manifest = assert_run_manifest_lists(mediagen.dask.write_run_manifest(out_dir), out, run_id)
    assert [entry["row"] for entry in manifest["rows"]] == list(out.index)  # the table's order
    assert (manifest["rows_planned"], manifest["rows_missing"]) == (6, [])

    result.compute()  # every task again
    result.partitions[2].compute()  # one partition alone (Dask numbers it 0 in that graph)
    again = mediagen.dask.generate(ddf.repartition(npartitions=2), **fields)
    assert list(again.compute()["generation_id"]) == list(out["generation_id"])
    # the 3 replaced, at most 2 of new rows, and the run's plan
    assert len(list(parts.glob("*.json"))) <= 3 + 2 + 1
    path = mediagen.datasets.write_run_manifest(str(out_dir), run_id=run_id)
    assert_run_manifest_lists(path, out, run_id)
    assert len(charge_entries(sandbox, cluster_tenant)) == before + len(out)  # paid once

    # another run of which only one partition was computed: the manifest names the rest
    lone_dir, lone_id = tmp_path / "lone", f"dask-{uuid.uuid4()}"
    lone = mediagen.dask.generate(ddf, **{**fields, "run_id": lone_id, "output_dir": str(lone_dir)})
    first = lone.partitions[0].compute()
    path = mediagen.dask.write_run_manifest(lone_dir)
    manifest = json.loads(Path(path).read_text())
    never = [str(label) for label in out.index if label not in first.index]
    assert manifest["rows_missing"] == never
    [problem] = check_run_manifest(path)
    assert problem.startswith(f"4 of 6 planned rows never ran ({manifest['rows_missing'][0]}, ")

"""A machine of a cluster takes its share of the pace the driver knew (or another machine
learned), once per published pace, and never from its own machine, whose processes already
share their pace file (real gates; a Dask cluster of two "machines": two workers, each with a
runtime directory of its own)."""

from __future__ import annotations

import uuid

import dask.dataframe as dd
import pandas as pd
import pytest
from cluster_fixtures import assert_one_charge_per_row, charge_entries

import mediagen
from mediagen.client._requests import KeyGate
from mediagen.datasets import _cluster, dask as mediagen_dask
from mediagen.local import _pace


def test_another_machine_takes_its_share_of_the_drivers_pace_once(monkeypatch, tmp_path):
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(tmp_path))
    monkeypatch.setattr(_cluster, "_ADOPTED", {})
    gate = KeyGate()
    pace = _cluster.ClusterPace("mediagen-pace-key_abc-123", 20.0, "another-machine", 100.0)
    with _cluster.share_of(pace, 0.25)(gate):
        assert gate.pace == pytest.approx(5.0)
    gate.learned = 3.0  # learned since on this machine: the same published pace is not undone
    with _cluster.share_of(pace, 0.25)(gate):
        assert gate.pace == pytest.approx(3.0)
    newer = _cluster.ClusterPace(pace.name, 40.0, "another-machine", 200.0)
    with _cluster.share_of(newer, 0.25)(gate):
        assert gate.pace == pytest.approx(10.0)


def test_the_drivers_own_machine_keeps_what_its_processes_learned(monkeypatch, tmp_path):
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(tmp_path))
    monkeypatch.setattr(_cluster, "_ADOPTED", {})
    gate = KeyGate()
    gate.learned = 7.0
    mine = _cluster.ClusterPace("mediagen-pace-key_abc-123", 20.0, _pace.machine_group(), 100.0)
    with _cluster.share_of(mine, 1.0)(gate):
        assert gate.pace == 7.0
    # a machine that knows nothing yet starts from the pace the driver was told
    monkeypatch.setattr(_cluster, "_ADOPTED", {})
    fresh = KeyGate()
    with _cluster.share_of(mine, 1.0)(fresh):
        assert fresh.pace == 20.0
    assert _pace.machine_group() == _pace.machine_group()  # one token per runtime directory
    monkeypatch.setenv(_pace.ENV_RUNTIME_DIR, str(tmp_path / "elsewhere"))
    assert _pace.machine_group() != mine.group


@pytest.mark.cluster
def test_two_machines_of_a_dask_cluster_divide_the_pace_the_driver_knew(
    sandbox, tenant_factory, tmp_path
):
    from distributed import Client, Nanny, Scheduler, SpecCluster, Variable

    tenant, limit = tenant_factory(balance=100_000.0), 10.0
    env = {"MEDIAGEN_API_KEY": tenant.api_key, "MEDIAGEN_BASE_URL": sandbox.base_url}
    workers = {
        f"machine-{n}": {
            "cls": Nanny,
            "options": {
                "nthreads": 1,
                "host": "127.0.0.1",
                "env": {**env, _pace.ENV_RUNTIME_DIR: str(tmp_path / f"m{n}")},
            },
        }
        for n in range(2)
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": ":0", "host": "127.0.0.1"}}
    frame = pd.DataFrame(
        {"sku": [f"sku-{i:04d}" for i in range(60)],
         "caption": [f"a weather vane number {i}" for i in range(60)]}
    ).set_index("sku")  # fmt: skip
    before_charges = len(charge_entries(sandbox, tenant))
    with (
        SpecCluster(workers=workers, scheduler=scheduler) as cluster,
        Client(cluster) as dask_client,
        mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, rate_limit=limit,
                        cache_dir=tmp_path / "driver") as driver,
        sandbox.admin.key_rate_limited(tenant.key_id, limit, burst=2),
    ):  # fmt: skip
        dask_client.wait_for_workers(2)
        before = sandbox.admin.key_requests(tenant.key_id)
        result = mediagen_dask.generate(
            dd.from_pandas(frame, npartitions=4), model="pixel-1", prompt="{caption}",
            run_id=f"machines-{uuid.uuid4()}", client=driver, concurrency=8,
        )  # fmt: skip
        out = result.compute()
        after = sandbox.admin.key_requests(tenant.key_id)
        name = _cluster.driver_pace(driver).name
        groups = dask_client.get_metadata([mediagen_dask.METADATA, name])
        record = Variable(name, client=dask_client).get(timeout=5)
    assert (out["status"] == "completed").all(), out["error"].dropna().tolist()[:3]
    assert_one_charge_per_row(out, charge_entries(sandbox, tenant)[before_charges:])
    assert len(set(groups.values())) == 2  # two machines, each its own pace file
    assert record["pace"] > 0
    passed, limited = after.passed - before.passed, after.limited - before.limited
    # each machine learning alone (no pace from the driver) meets some 14% of 429s here
    share = limited / (passed + limited)
    assert share <= 0.1, f"{share:.1%} of {passed + limited} requests were 429s"

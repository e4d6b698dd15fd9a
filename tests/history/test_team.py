"""A team's history: three members export their stores into one shared folder, and a lead
answers "spend by member by model" from it with DuckDB and with pandas."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

import mediagen
from mediagen.history import HistoryStore, read_team


@pytest.fixture
def members(sandbox, tenant_factory, tmp_path):
    made = {}
    for name, n in (("ana", 30), ("bo", 45), ("chen", 60)):
        tenant = tenant_factory()
        sandbox.admin.seed_generations(
            tenant.member_id,
            n,
            models=["pixel-1", "voxa-tts"],
            completed_fraction=0.8,
            failed_fraction=0.2,
        )
        client = mediagen.Client(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path / name
        )
        made[name] = client
    yield made
    for client in made.values():
        client.close()


def test_three_members_exports_read_as_one_table(members, tmp_path):
    shared = tmp_path / "team-history"
    expected = []
    for name, client in members.items():
        store = HistoryStore.for_client(client)
        store.sync(client)
        store.export_team(shared, member=name)
        store.export_team(shared, member=name)  # a re-export replaces, never doubles
        frame = store.frame()
        expected.append(frame.assign(member=name))
    expected = pd.concat(expected)
    want = expected.groupby(["member", expected["model"].astype(str)])["credits_charged"].sum()

    team = read_team(shared)
    assert len(team) == len(expected) == 135
    assert team["id"].is_unique
    got = team.groupby(["member", team["model"].astype(str)])["credits_charged"].sum()
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), check_names=False)

    exports = duckdb.read_parquet(str(shared / "**" / "*.parquet"), hive_partitioning=True)
    answer = (
        exports.aggregate("member, model, sum(credits_charged) AS spent", "member, model")
        .order("member, model")
        .df()
    )
    assert answer["spent"].round(6).tolist() == want.sort_index().round(6).tolist()
    assert sorted({p.parent.parent.name for p in shared.rglob("*.parquet")}) == [
        "member=ana",
        "member=bo",
        "member=chen",
    ]


def test_a_member_name_cannot_escape_the_folder(members, tmp_path):
    client = members["ana"]
    store = HistoryStore.for_client(client)
    store.sync(client)
    for bad in ("../x", "", ".hidden"):
        with pytest.raises(ValueError, match="plain name"):
            store.export_team(tmp_path / "t", member=bad)

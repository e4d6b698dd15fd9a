"""The local history store against the real sandbox: incremental syncs, offline reads, SQL, and
a sync killed with SIGKILL at random points that resumes with every row once and none torn."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import httpx
import pandas as pd
import pytest

import mediagen
from mediagen.history import HistoryStore, sql


@pytest.fixture
def client(sandbox, tenant, tmp_path):
    with mediagen.Client(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path / "cache"
    ) as c:
        yield c


def _service_ids(client) -> set[str]:
    return set(client.generations.to_dataframe(store=False)["id"])


def test_an_async_client_syncs_and_answers_sql_through_its_blocking_twin(sandbox, tenant, tmp_path):
    """The sync writes files as it goes and blocks; given an ``AsyncClient`` (whose calls are
    coroutines) it reads through the client's blocking twin: a settled job of the pending set
    is fetched again, not a coroutine stored."""
    import asyncio

    async def main() -> tuple[int, int]:
        async with mediagen.AsyncClient(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path / "cache"
        ) as aclient:
            slow = await aclient.images.create(model="pixel-1", prompt="going [[slow:1]]")
            store = HistoryStore.for_client(aclient)
            first = store.sync(aclient)
            await aclient.generations.wait(slow, timeout=60, poll_interval=0.1)
            second = store.sync(aclient)  # the pending one settled: fetched by id
            counted = sql("SELECT count(*) AS n FROM generations", aclient)
            return first.pending, int(counted["n"].iloc[0]) + second.pending

    pending_before, rows_and_pending_after = asyncio.run(main())
    assert pending_before == 1
    assert rows_and_pending_after == 1  # one row, nothing pending any more


def test_a_second_sync_fetches_only_what_is_new_and_pending_rows_settle(sandbox, tenant, client):
    sandbox.admin.seed_generations(
        tenant.member_id, 250, completed_fraction=0.8, failed_fraction=0.2
    )
    slow = client.images.create(model="pixel-1", prompt="still going [[slow:2]]")
    quick = [client.images.create(model="pixel-1", prompt=f"quick {i}") for i in range(2)]
    for gen in quick:  # settled, but created after a pending one: the next sync meets them again
        client.generations.wait(gen, timeout=60, poll_interval=0.1)
    store = HistoryStore.for_client(client)

    first = store.sync(client)
    assert first.fetched == 253
    assert first.pending >= 1  # the slow one at least

    client.generations.wait(slow, timeout=60, poll_interval=0.1)
    newer = [client.images.create(model="pixel-1", prompt=f"new {i}") for i in range(3)]
    for gen in newer:
        client.generations.wait(gen, timeout=60, poll_interval=0.1)

    second = store.sync(client)
    # Only the window from the oldest pending one on is fetched again, not the 250 seeded.
    assert second.fetched <= 6  # the 3 new, the one that was pending, the newest again
    assert second.stored == 4
    assert second.pending == 0
    frame = store.frame()
    assert frame["id"].is_unique
    assert set(frame["id"]) == _service_ids(client)
    assert (frame.loc[frame["id"] == slow.id, "status"] == "completed").all()


def test_to_dataframe_reads_the_store_and_sync_false_works_offline(sandbox, tenant, client):
    for i in range(3):
        client.generations.wait(
            client.images.create(model="pixel-1", prompt=f"p {i}"), timeout=60, poll_interval=0.1
        )
    synced = client.generations.to_dataframe()
    assert len(synced) == 3
    sandbox.admin.revoke_key(tenant.key_id)  # the service now refuses this key
    offline = client.generations.to_dataframe(sync=False)
    pd.testing.assert_frame_equal(offline, synced)
    with pytest.raises(mediagen.AuthenticationError):
        client.generations.to_dataframe()  # a sync asks the service, which says no
    assert client.generations.to_dataframe(sync=False, status="completed").shape[0] == 3
    assert client.generations.to_dataframe(sync=False, model="pixel-pro").empty


def test_rebuild_starts_over_and_the_store_holds_no_key(sandbox, tenant, client):
    sandbox.admin.seed_generations(tenant.member_id, 40)
    store = HistoryStore.for_client(client)
    store.sync(client)
    assert store.sync(client).fetched < 40
    client.generations.to_dataframe(rebuild=True)
    assert len(store.frame()) == 40
    for path in store.root.rglob("*"):
        if path.is_file():
            assert tenant.api_key.encode() not in path.read_bytes()
    assert tenant.api_key not in str(store.root)


def test_sql_answers_spend_by_model_like_pandas(sandbox, tenant, client):
    sandbox.admin.seed_generations(
        tenant.member_id, 300, models=["pixel-1", "vidra-2", "voxa-tts"], completed_fraction=0.7
    )
    frame = client.generations.to_dataframe()
    answer = sql(
        "SELECT model, sum(credits_charged) AS spent, count(*) AS n FROM generations "
        "GROUP BY model ORDER BY model",
        client,
        sync=False,
    )
    expected = (
        frame.assign(model=frame["model"].astype(str))
        .groupby("model")
        .agg(spent=("credits_charged", "sum"), n=("id", "size"))
        .reset_index()
        .sort_values("model")
    )
    assert answer["model"].tolist() == expected["model"].tolist()
    assert answer["n"].tolist() == expected["n"].tolist()
    assert answer["spent"].round(6).tolist() == expected["spent"].round(6).tolist()


def test_a_crash_between_writing_rows_and_the_state_stores_nothing_twice(sandbox, tenant, client):
    """The state is renamed into place last; a crash just before leaves new rows and old state."""
    slow = client.images.create(model="pixel-1", prompt="pending across syncs [[slow:2]]")
    store = HistoryStore.for_client(client)
    store.sync(client)
    before = (store.root / "state.json").read_bytes()
    done = [client.images.create(model="pixel-1", prompt=f"done {i}") for i in range(3)]
    for gen in [slow, *done]:
        client.generations.wait(gen, timeout=60, poll_interval=0.1)
    store.sync(client)
    (store.root / "state.json").write_bytes(before)  # as if killed before the state's rename
    again = store.sync(client)
    assert again.fetched >= 4
    assert again.stored == 0
    frame = store.frame()
    assert frame["id"].is_unique
    assert len(frame) == 4
    assert len(store.sql("SELECT id FROM generations")) == 4


SYNC_CHILD = textwrap.dedent(
    """
    import sys
    import mediagen
    from mediagen.history import HistoryStore
    base_url, key, cache = sys.argv[1:4]
    with mediagen.Client(api_key=key, base_url=base_url, cache_dir=cache) as client:
        HistoryStore.for_client(client).sync(client, chunk_pages=1)
    """
)


def _wait_for_progress(state_file, deadline: float) -> None:
    """Until the child's sync has saved at least one chunk (a resume cursor in its state)."""
    while time.monotonic() < deadline:
        try:
            state = json.loads(state_file.read_text())
        except (FileNotFoundError, ValueError):
            state = {}
        if (state.get("resume") or {}).get("cursor"):
            return
        time.sleep(0.01)
    raise AssertionError("the sync never saved a chunk")


@pytest.mark.slow
def test_a_sync_killed_at_random_points_resumes_without_torn_or_duplicated_rows(
    sandbox, tenant, client, tmp_path
):
    # Long enough (100 pages, one chunk each) that a kill within 0.3 s lands mid-sync.
    sandbox.admin.seed_generations(tenant.member_id, 10_000, completed_fraction=0.9)
    store = HistoryStore.for_client(client)
    expected = _service_ids(client)
    rng = random.Random(7)
    resumed = 0
    for _trial in range(4):
        store.clear()
        child = subprocess.Popen(
            [sys.executable, "-c", SYNC_CHILD, sandbox.base_url, tenant.api_key, tmp_path / "cache"]
        )
        try:
            _wait_for_progress(store.root / "state.json", time.monotonic() + 60)
            time.sleep(rng.uniform(0, 0.3))
        finally:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
        result = store.sync(client)
        resumed += result.resumed
        frame = store.frame()
        assert frame["id"].is_unique
        assert set(frame["id"]) == expected
        assert not list(store.root.rglob(".*.part-*"))
    assert resumed >= 3  # killed mid-sync, not after it finished


def test_the_list_endpoint_pages_only_after_the_last_sync(sandbox, tenant, tmp_path):
    """Count the requests: a re-sync with nothing new is one page, not the whole history."""
    sandbox.admin.seed_generations(
        tenant.member_id, 450, completed_fraction=0.9, failed_fraction=0.1
    )
    seen: list[str] = []
    http = httpx.Client(event_hooks={"request": [lambda r: seen.append(r.url.path)]}, timeout=60)
    with mediagen.Client(
        api_key=tenant.api_key,
        base_url=sandbox.base_url,
        cache_dir=tmp_path / "c",
        http_client=http,
    ) as c:
        c.generations.to_dataframe()
        full = seen.count("/v1/generations")
        seen.clear()
        c.generations.to_dataframe()
        assert seen.count("/v1/generations") == 1 < full


def test_a_store_written_from_pandas_by_the_previous_version_reads_back_unchanged(tmp_path):
    """Segments used to be written from the DataFrame (categories as Arrow dictionaries);
    now they are written from Arrow columns. A store of the old kind is read as it was, with
    no rebuild (a user's 1M-row store is not fetched again)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from history_factory import generation

    from mediagen.history import frame_from_generations
    from mediagen.history._store import STORED_COLUMNS, table_of

    gens = [
        generation(status="completed"),
        generation(type="image", status="failed", error=("safety", "blocked")),
        generation(type="audio", mode="default"),
    ]
    frame = frame_from_generations(gens)[list(STORED_COLUMNS)]
    old = pa.Table.from_pandas(frame, preserve_index=False)
    assert pa.types.is_dictionary(old.schema.field("type").type)
    (tmp_path / "settled").mkdir()
    pq.write_table(
        old,
        tmp_path / "settled" / "part-000000.parquet",
        coerce_timestamps="us",
        allow_truncated_timestamps=True,
    )
    store = HistoryStore(tmp_path)
    expected = frame.sort_values("created_at", ascending=False).reset_index(drop=True)
    pd.testing.assert_frame_equal(store.frame(), expected)
    # ...and beside it a segment of today's kind (what the next sync adds).
    newer = frame_from_generations([generation(type="video")])[list(STORED_COLUMNS)]
    store._write_table(tmp_path / "settled" / "part-000001.parquet", table_of(newer))
    both = store.frame()
    assert list(both["id"]) == [newer["id"][0], *expected["id"]]
    by_type = store.sql("SELECT type, count(*) AS n FROM generations GROUP BY ALL ORDER BY type")
    assert by_type.to_dict("list") == {"type": ["audio", "image", "video"], "n": [1, 1, 2]}

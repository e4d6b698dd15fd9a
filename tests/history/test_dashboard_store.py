"""The spend dashboard shows the local history store: synced on refresh, readable offline."""

from __future__ import annotations

import mediagen
from mediagen import history


def test_the_dashboard_syncs_the_store_and_shows_it_offline(sandbox, tenant, tmp_path):
    with mediagen.Client(
        api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path, poll_interval=0.05
    ) as client:
        client.images.create(model="pixel-1", prompt="a kite").wait()
        board = mediagen.spend_dashboard(client)
        assert len(board.frame) == 1, board.status_line
        store = history.HistoryStore.for_client(client)
        assert list(store.frame()["id"]) == list(board.frame["id"])

        client.images.create(model="pixel-1", prompt="a storm [[fail:timeout]]").wait()
        board.refresh()
        assert sorted(board.frame["status"]) == ["completed", "failed"]
        assert len(store.frame()) == 2

        sandbox.admin.revoke_key(tenant.key_id)  # the service now refuses this key
        offline = mediagen.spend_dashboard(client, sync=False)
        assert "failed" not in offline.status_line.lower(), offline.status_line
        assert sorted(offline.frame["id"]) == sorted(board.frame["id"])
        assert "2 (1 completed, 1 failed, 0 pending)" in {x["value"] for x in offline.headline}

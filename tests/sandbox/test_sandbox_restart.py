"""Durability: a server killed mid-job and restarted loses nothing and strands no credits."""

from __future__ import annotations

import httpx
from sandbox_helpers import client, image_example, ledger_totals, wait, with_marker

from mediagen_sandbox.testing import running_sandbox


def _without_urls(generation: dict) -> dict:
    outputs = [{k: v for k, v in o.items() if k != "url"} for o in generation["outputs"]]
    return {**generation, "outputs": outputs}


def test_sigkill_mid_job_then_restart(tmp_path):
    with running_sandbox(data_dir=tmp_path / "data", speed=0.0) as sb:
        first_key, admin_token = sb.api_key, sb.admin_token
        tenant = sb.new_tenant(balance=100, cap=90)
        _model, body = image_example(sb)
        with client(sb, tenant) as c:
            done = wait(c, c.post("/v1/images", json=body).json()["id"])
            slow = c.post("/v1/images", json=with_marker(body, "[[slow:2]]")).json()
            failing = c.post("/v1/images", json=with_marker(body, "[[slow:1]] [[fail:timeout]]"))
            keyed = c.post("/v1/images", json={**body, "idempotency_key": "survives"}).json()
            assert c.get(f"/v1/generations/{slow['id']}").json()["status"] == "pending"
        before = ledger_totals(sb, tenant.org_id)
        assert before["reserved"] > 0
        sb.kill()  # SIGKILL: no shutdown code runs

        sb.start()
        assert (sb.api_key, sb.admin_token) == (first_key, admin_token)
        with client(sb, tenant) as c:
            assert _without_urls(c.get(f"/v1/generations/{done['id']}").json()) == (
                _without_urls(done)
            )
            assert wait(c, slow["id"])["status"] == "completed"
            assert wait(c, failing.json()["id"])["error"]["code"] == "timeout"
            replay = c.post("/v1/images", json={**body, "idempotency_key": "survives"})
            assert replay.json()["id"] == keyed["id"]
            wait(c, keyed["id"])
            # Downloads of outputs rendered before the crash still work.
            url = c.get(f"/v1/generations/{done['id']}").json()["outputs"][0]["url"]
            assert httpx.get(url).status_code == 200
            credits = c.get("/v1/credits").json()
        after = ledger_totals(sb, tenant.org_id)
        assert after["reserved"] == 0
        assert after["open_reservations"] == 0
        assert after["granted"] == before["granted"]
        assert credits["member_limit"]["used"] == float(after["charged"])


def test_graceful_stop_and_restart_keeps_keys_and_data(tmp_path):
    with running_sandbox(data_dir=tmp_path / "d", speed=0.0) as sb:
        tenant = sb.new_tenant(balance=50)
        _model, body = image_example(sb)
        with client(sb, tenant) as c:
            gen = wait(c, c.post("/v1/images", json=body).json()["id"])
        server = sb.process
        sb.stop()
        # a clean exit on SIGTERM, not the SIGKILL that stop() falls back to after its timeout
        assert server is not None
        assert server.returncode == 0
        sb.start()
        with client(sb, tenant) as c:
            assert c.get(f"/v1/generations/{gen['id']}").json()["status"] == "completed"
        with client(sb) as c:
            assert c.get("/v1/credits").status_code == 200  # the printed key still works
        key_file = tmp_path / "d" / "bootstrap_key"
        assert oct(key_file.stat().st_mode & 0o777) == "0o600"
        db = (tmp_path / "d" / "sandbox.db").read_bytes()
        assert sb.api_key.encode() not in db

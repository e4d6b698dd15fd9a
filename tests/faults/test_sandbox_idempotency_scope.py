"""Idempotency keys are scoped to the organization, generations are readable only by the member
who made them: a member who knows another member's key and body gets a 409, never that
member's generation, and nothing is charged (docs/wire-contract.md, "Idempotency")."""

from __future__ import annotations

import httpx
from sandbox_faults import assert_spec_error, credits, generation_count, image_request


def test_another_members_key_is_a_conflict_not_their_generation(sandbox, tenant):
    other = sandbox.admin.create_member(tenant.org_id, name="Colleague")
    other_key = sandbox.admin.create_key(other.id).api_key
    body = {**image_request(), "prompt": "a private sketch", "idempotency_key": "shared-key-1"}
    with (
        httpx.Client(base_url=sandbox.base_url, headers=tenant.headers) as mine,
        httpx.Client(
            base_url=sandbox.base_url, headers={"Authorization": f"Bearer {other_key}"}
        ) as theirs,
    ):
        first = mine.post("/v1/images", json=body)
        assert first.status_code == 200, first.text
        balance_after_first = credits(mine)[0]

        replay = theirs.post("/v1/images", json=body)
        error = assert_spec_error(replay, 409, "conflict")
        assert first.json()["id"] not in replay.text
        assert "private sketch" not in replay.text
        by_header = theirs.post(
            "/v1/images",
            json={k: v for k, v in body.items() if k != "idempotency_key"},
            headers={"Idempotency-Key": "shared-key-1"},
        )
        assert_spec_error(by_header, 409, "conflict")
        assert "another member" in error["message"]
        assert generation_count(theirs) == 0
        assert theirs.get(f"/v1/generations/{first.json()['id']}").status_code == 404

        # The member who made it still gets it back, charged once.
        again = mine.post("/v1/images", json=body)
        assert again.status_code == 200
        assert again.json()["id"] == first.json()["id"]
        assert credits(mine)[0] == balance_after_first
        assert generation_count(mine) == 1

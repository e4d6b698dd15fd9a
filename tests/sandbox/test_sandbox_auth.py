"""Authentication and tenancy, provoked for real over loopback HTTP."""

from __future__ import annotations

import httpx
import pytest
from sandbox_helpers import assert_error, client, image_example, wait


def test_missing_key_is_401(sandbox):
    r = httpx.get(f"{sandbox.base_url}/v1/credits")
    error = assert_error(r, 401, "unauthenticated")
    assert "Authorization" in error["message"]


@pytest.mark.parametrize("header", ["Bearer mgsk_not-a-real-key", "Bearer", "Basic abc", "x"])
def test_invalid_key_is_401(sandbox, header):
    r = httpx.get(f"{sandbox.base_url}/v1/credits", headers={"Authorization": header})
    assert_error(r, 401, "unauthenticated")


def test_revoked_key_is_401_and_secret_never_echoed(sandbox, tenant):
    with client(sandbox, tenant) as c:
        assert c.get("/v1/credits").status_code == 200
        sandbox.admin.revoke_key(tenant.key_id)
        r = c.get("/v1/credits")
    error = assert_error(r, 401, "unauthenticated")
    assert "revoked" in error["message"]
    assert tenant.api_key not in r.text


def test_expired_key_is_401(sandbox, tenant):
    sandbox.admin.expire_key(tenant.key_id)
    with client(sandbox, tenant) as c:
        error = assert_error(c.get("/v1/credits"), 401, "unauthenticated")
    assert "expired" in error["message"]


def test_key_with_past_expiry_at_creation_is_401(sandbox, tenant):
    key = sandbox.admin.create_key(tenant.member_id, expires_at="2001-01-01T00:00:00Z")
    with client(sandbox, api_key=key.api_key) as c:
        assert_error(c.get("/v1/credits"), 401, "unauthenticated")


def test_admin_token_is_not_an_api_key(sandbox):
    r = httpx.get(
        f"{sandbox.base_url}/v1/credits",
        headers={"Authorization": f"Bearer {sandbox.admin_token}"},
    )
    assert_error(r, 401, "unauthenticated")


@pytest.mark.parametrize("path", ["/openapi.json", "/admin/state", "/docs", "/elsewhere"])
def test_api_key_outside_v1_is_403(sandbox, tenant, path):
    with client(sandbox, tenant) as c:
        r = c.get(path)
    error = assert_error(r, 403, "forbidden")
    assert "/v1" in error["message"]


def test_admin_api_needs_the_admin_token(sandbox):
    r = httpx.get(f"{sandbox.base_url}/admin/state")
    assert_error(r, 401, "unauthenticated")
    r = httpx.get(f"{sandbox.base_url}/admin/state", headers={"X-Admin-Token": "wrong"})
    assert_error(r, 401, "unauthenticated")


def test_members_see_only_their_own_generations(sandbox, tenant):
    other = sandbox.admin.create_member(tenant.org_id)
    other_key = sandbox.admin.create_key(other.id).api_key
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as mine, client(sandbox, api_key=other_key) as theirs:
        gen = mine.post("/v1/images", json=body).json()
        wait(mine, gen["id"])
        r = theirs.get(f"/v1/generations/{gen['id']}")
        assert_error(r, 404, "not_found")
        assert theirs.get("/v1/generations").json()["data"] == []
        listed = mine.get("/v1/generations").json()["data"]
        assert [g["id"] for g in listed] == [gen["id"]]


def test_key_bills_as_its_creator(sandbox, tenant):
    """A second key of the same member sees the same generations and the same cap."""
    second = sandbox.admin.create_key(tenant.member_id).api_key
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as first, client(sandbox, api_key=second) as c2:
        gen = first.post("/v1/images", json=body).json()
        assert c2.get(f"/v1/generations/{gen['id']}").status_code == 200
        wait(c2, gen["id"])
    entries = sandbox.admin.ledger(tenant.org_id)["entries"]
    assert {e["member_id"] for e in entries if e["kind"] == "reserve"} == {tenant.member_id}


def test_unknown_generation_is_404(sandbox, tenant):
    with client(sandbox, tenant) as c:
        r = c.get("/v1/generations/00000000-0000-4000-8000-000000000000")
    assert_error(r, 404, "not_found")

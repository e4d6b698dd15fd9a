"""429 rate_limited per key, with Retry-After; polling counts against the limit."""

from __future__ import annotations

import httpx
from sandbox_helpers import assert_error, client


def test_rate_limit_per_key_with_retry_after(sandbox, tenant, tenant_factory):
    other = tenant_factory()
    limited = sandbox.admin.config_changed(rate_limit_per_second=0.2, rate_limit_burst=3)
    with limited, client(sandbox, tenant) as c, client(sandbox, other) as c2:
        statuses = [c.get("/v1/credits").status_code for _ in range(3)]
        assert statuses == [200, 200, 200]
        r = c.get("/v1/generations")  # polling counts too
        error = assert_error(r, 429, "rate_limited")
        retry_after = r.headers["retry-after"]
        assert retry_after.isdigit()
        assert int(retry_after) >= 1
        assert f"{retry_after} seconds" in error["message"]
        # Per key: another key still gets through.
        assert c2.get("/v1/credits").status_code == 200


def test_rate_limit_applies_to_unknown_generation_polls(sandbox, tenant):
    limited = sandbox.admin.config_changed(rate_limit_per_second=0.1, rate_limit_burst=1)
    with limited, client(sandbox, tenant) as c:
        url = "/v1/generations/00000000-0000-4000-8000-000000000000"
        assert c.get(url).status_code == 404
        assert_error(c.get(url), 429, "rate_limited")


def test_signed_file_urls_are_not_rate_limited_by_key(sandbox, tenant):
    with sandbox.admin.config_changed(rate_limit_per_second=0.1, rate_limit_burst=1):
        r = httpx.get(f"{sandbox.base_url}/files/asset_x/y.png?expires=1&sig=0")
    assert_error(r, 403, "forbidden")


def test_the_requests_of_a_key_are_counted_let_through_or_limited(sandbox, tenant):
    before = sandbox.admin.key_requests(tenant.key_id)
    limited = sandbox.admin.config_changed(rate_limit_per_second=0.1, rate_limit_burst=2)
    with limited, client(sandbox, tenant) as c:
        statuses = [c.get("/v1/credits").status_code for _ in range(5)]
    after = sandbox.admin.key_requests(tenant.key_id)
    assert statuses.count(429) == 3
    assert after.passed - before.passed == 2
    assert after.limited - before.limited == 3


def test_a_key_limited_on_its_own_leaves_every_other_key_at_the_servers_limit(
    sandbox, tenant, tenant_factory
):
    other = tenant_factory()
    with (
        sandbox.admin.key_rate_limited(tenant.key_id, 0.1, burst=2) as record,
        client(sandbox, tenant) as c,
        client(sandbox, other) as c2,
    ):
        assert record["rate_limit_per_second"] == 0.1
        assert record["rate_limit_burst"] == 2
        assert [c.get("/v1/credits").status_code for _ in range(3)] == [200, 200, 429]
        assert all(c2.get("/v1/credits").status_code == 200 for _ in range(10))
    with client(sandbox, tenant) as c:  # the server's limit again, and a full bucket
        assert c.get("/v1/credits").status_code == 200


def test_a_keys_own_limit_is_checked(sandbox, tenant):
    admin = httpx.Client(base_url=sandbox.base_url, headers={"X-Admin-Token": sandbox.admin_token})
    with admin:
        path = f"/admin/keys/{tenant.key_id}"
        assert_error(admin.patch(path, json={"rate_limit_per_second": 0}), 422, "validation_error")
        assert_error(admin.patch(path, json={"rate_limit_burst": 3}), 422, "validation_error")
        unknown = admin.patch("/admin/keys/key_nope", json={"rate_limit_per_second": 1})
        assert_error(unknown, 404, "not_found")
        cleared = admin.patch(path, json={"rate_limit_per_second": None}).json()
        assert cleared["rate_limit_per_second"] is None

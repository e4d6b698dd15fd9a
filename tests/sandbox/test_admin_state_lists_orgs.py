"""``GET /admin/state`` names the organizations, so a top-up can find its target."""

from __future__ import annotations


def test_admin_state_lists_every_org_id(sandbox, tenant_factory):
    first, second = tenant_factory(), tenant_factory()
    state = sandbox.admin.state()
    assert {first.org_id, second.org_id} <= set(state["org_ids"])
    assert len(state["org_ids"]) == state["counts"]["orgs"]

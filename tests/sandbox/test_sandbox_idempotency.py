"""Idempotency: header and body field, 409 on reuse, 422 on mismatch, drop-after-commit."""

from __future__ import annotations

import httpx
import pytest
from sandbox_helpers import assert_error, client, image_example, ledger_totals, wait, with_marker


def _kinds(sandbox, org_id: str) -> list[str]:
    return [e["kind"] for e in sandbox.admin.ledger(org_id)["entries"]]


@pytest.mark.parametrize("where", ["header", "body"])
def test_same_key_same_body_returns_original_and_charges_once(sandbox, tenant, where):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        if where == "header":
            send = lambda: c.post("/v1/images", json=body, headers={"Idempotency-Key": "k-1"})  # noqa: E731
        else:
            send = lambda: c.post("/v1/images", json={**body, "idempotency_key": "k-1"})  # noqa: E731
        first = send().json()
        assert first["idempotency_key"] == "k-1"
        done = wait(c, first["id"])
        again = send()
        assert again.status_code == 200
        assert again.json()["id"] == first["id"]
        assert again.json()["status"] == done["status"] == "completed"
    assert _kinds(sandbox, tenant.org_id) == ["grant", "reserve", "charge"]


def test_header_and_body_are_equivalent(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        first = c.post("/v1/images", json=body, headers={"Idempotency-Key": "same"}).json()
        second = c.post("/v1/images", json={**body, "idempotency_key": "same"}).json()
        both = c.post(
            "/v1/images",
            json={**body, "idempotency_key": "same"},
            headers={"Idempotency-Key": "same"},
        ).json()
    assert first["id"] == second["id"] == both["id"]


def test_same_key_different_body_is_409(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        c.post("/v1/images", json={**body, "idempotency_key": "k-2"})
        r = c.post("/v1/images", json={**body, "prompt": "another", "idempotency_key": "k-2"})
    assert_error(r, 409, "conflict")
    assert _kinds(sandbox, tenant.org_id).count("reserve") == 1


def test_header_body_mismatch_is_422(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        r = c.post(
            "/v1/images", json={**body, "idempotency_key": "a"}, headers={"Idempotency-Key": "b"}
        )
    error = assert_error(r, 422, "validation_error")
    assert error["details"][0]["loc"] == ["body", "idempotency_key"]
    assert _kinds(sandbox, tenant.org_id) == ["grant"]


@pytest.mark.parametrize("bad", ["", "has space", "tab\there", "x" * 129])
def test_bad_body_key_is_422(sandbox, tenant, bad):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        r = c.post("/v1/images", json={**body, "idempotency_key": bad})
    error = assert_error(r, 422, "validation_error")
    assert error["details"][0]["loc"] == ["body", "idempotency_key"]


def test_header_key_longer_than_128_is_422(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        r = c.post("/v1/images", json=body, headers={"Idempotency-Key": "k" * 129})
        assert_error(r, 422, "validation_error")
        ok = c.post("/v1/images", json=body, headers={"Idempotency-Key": "k" * 128})
        assert ok.status_code == 200


def test_keys_are_scoped_to_the_organization(sandbox, tenant_factory):
    _model, body = image_example(sandbox)
    a, b = tenant_factory(), tenant_factory()
    with client(sandbox, a) as ca, client(sandbox, b) as cb:
        ga = ca.post("/v1/images", json={**body, "idempotency_key": "shared"}).json()
        gb = cb.post("/v1/images", json={**body, "prompt": "x", "idempotency_key": "shared"})
    assert gb.status_code == 200
    assert gb.json()["id"] != ga["id"]


def test_keys_are_shared_by_members_of_one_organization(sandbox, tenant):
    _model, body = image_example(sandbox)
    other = sandbox.admin.create_member(tenant.org_id)
    other_key = sandbox.admin.create_key(other.id).api_key
    with client(sandbox, tenant) as c, client(sandbox, api_key=other_key) as c2:
        c.post("/v1/images", json={**body, "idempotency_key": "org-wide"})
        r = c2.post("/v1/images", json={**body, "prompt": "x", "idempotency_key": "org-wide"})
    assert_error(r, 409, "conflict")


def test_drop_after_commit_then_replay_is_charged_once(sandbox, tenant):
    _model, body = image_example(sandbox)
    body = {**with_marker(body, "[[drop]]"), "idempotency_key": "drop-me"}
    with client(sandbox, tenant) as c:
        with pytest.raises(httpx.TransportError):
            c.post("/v1/images", json=body)
        replay = c.post("/v1/images", json=body)
        assert replay.status_code == 200
        done = wait(c, replay.json()["id"])
        assert done["status"] == "completed"
        assert len(c.get("/v1/generations").json()["data"]) == 1
    assert _kinds(sandbox, tenant.org_id) == ["grant", "reserve", "charge"]
    ledger_totals(sandbox, tenant.org_id)


def test_admin_drop_next_submits(sandbox, tenant):
    _model, body = image_example(sandbox)
    sandbox.admin.set_config(drop_next_submits=1)
    try:
        with client(sandbox, tenant) as c:
            with pytest.raises(httpx.TransportError):
                c.post("/v1/images", json=body, headers={"Idempotency-Key": "d-1"})
            r = c.post("/v1/images", json=body, headers={"Idempotency-Key": "d-1"})
            assert r.status_code == 200
            assert c.post("/v1/images", json=body).status_code == 200  # budget used up
    finally:
        sandbox.admin.set_config(drop_next_submits=0)
    assert _kinds(sandbox, tenant.org_id).count("reserve") == 2

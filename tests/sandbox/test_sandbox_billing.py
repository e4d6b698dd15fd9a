"""Credits: reserve on submit, charge on completion, refund on failure, 402 and 403 rules."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from sandbox_helpers import (
    assert_error,
    client,
    endpoint,
    image_example,
    kind_example,
    ledger_totals,
    models,
    wait,
    with_marker,
)

GENERATION_ERROR_CODES = [
    "rate_limited",
    "timeout",
    "safety",
    "invalid_voice",
    "invalid_request",
    "billing_or_access",
    "provider_auth",
    "provider_unavailable",
    "provider_error",
]


def _estimate(c, model: str, **query) -> dict:
    r = c.get(f"/v1/models/{model}/estimate", params=query)
    assert r.status_code == 200, r.text
    return r.json()


def test_completion_charges_exactly_the_estimate_after_discount(sandbox, tenant_factory):
    tenant = tenant_factory(balance=500, discount_percent=15)
    model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        quote = _estimate(c, model)
        assert quote["discount_percent"] == 15
        expected = Decimal(str(quote["credits"])) * Decimal("0.85")
        assert Decimal(str(quote["credits_after_discount"])) == expected.quantize(Decimal("0.01"))
        gen = c.post("/v1/images", json=body).json()
        assert gen["status"] == "pending"
        assert gen["credits_charged"] is None
        assert gen["outputs"] == []
        during = c.get("/v1/credits").json()
        assert during["reserved"] == pytest.approx(quote["credits_after_discount"])
        done = wait(c, gen["id"])
        assert done["status"] == "completed", done
        assert done["credits_charged"] == quote["credits_after_discount"]
        assert done["completed_at"]
        assert done["outputs"]
        for out in done["outputs"]:
            assert out["asset_id"].startswith("asset_")
            assert out["url"]
            assert out["content_type"].startswith("image/")
            assert out["width"]
            assert out["height"]
        credits = c.get("/v1/credits").json()
    assert credits["balance"] == pytest.approx(500 - quote["credits_after_discount"])
    totals = ledger_totals(sandbox, tenant.org_id)
    assert totals["open_reservations"] == 0


@pytest.mark.parametrize("code", GENERATION_ERROR_CODES)
def test_each_generation_error_code_refunds(sandbox, tenant, code):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        gen = c.post("/v1/images", json=with_marker(body, f"[[fail:{code}]]")).json()
        done = wait(c, gen["id"])
        assert done["status"] == "failed"
        assert done["error"]["code"] == code
        assert done["error"]["message"]
        assert done["credits_charged"] is None
        assert done["outputs"] == []
        assert c.get("/v1/credits").json()["balance"] == 1000
    kinds = [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]
    assert kinds == ["grant", "reserve", "refund"]
    ledger_totals(sandbox, tenant.org_id)


def test_unknown_fault_code_is_422(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        r = c.post("/v1/images", json=with_marker(body, "[[fail:bogus]]"))
    assert_error(r, 422, "validation_error")


def test_random_failure_rate_per_model(sandbox, tenant):
    model, body = image_example(sandbox)
    changed = sandbox.admin.config_changed(failure_rates={model: 1.0}, failure_code="timeout")
    with changed, client(sandbox, tenant) as c:
        done = wait(c, c.post("/v1/images", json=body).json()["id"])
    assert done["status"] == "failed"
    assert done["error"]["code"] == "timeout"
    ledger_totals(sandbox, tenant.org_id)


def test_insufficient_balance_is_402_before_any_reservation(sandbox, tenant_factory):
    tenant = tenant_factory(balance=0.01)
    model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        quote = _estimate(c, model)
        assert quote["can_afford"] is False
        assert quote["allowed"] is True
        r = c.post("/v1/images", json=body)
        error = assert_error(r, 402, "payment_required")
        assert f"{quote['credits_after_discount']:.2f}" in error["message"]
        assert "0.01" in error["message"]
        assert error["required_credits"] == quote["credits_after_discount"]
        assert error["available_credits"] == 0.01
        assert error["details"] is None  # details stay the 422's
        assert c.get("/v1/generations").json()["data"] == []
    assert [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]] == ["grant"]


def test_member_cap_is_402_and_says_so(sandbox, tenant_factory):
    model, body = image_example(sandbox)
    with client(sandbox) as c:
        price = _estimate(c, model)["credits_after_discount"]
    tenant = tenant_factory(balance=1000, cap=price * 1.5)
    with client(sandbox, tenant) as c:
        credits = c.get("/v1/credits").json()
        assert credits["member_limit"]["limit"] == pytest.approx(price * 1.5)
        assert credits["member_limit"]["used"] == 0
        assert credits["member_limit"]["resets_at"].endswith("T00:00:00Z")
        assert credits["balance"] == pytest.approx(price * 1.5)
        assert credits["organization_balance"] == 1000
        first = c.post("/v1/images", json=body)
        assert first.status_code == 200
        error = assert_error(c.post("/v1/images", json=body), 402, "payment_required")
        assert "cap" in error["message"]
        assert error["required_credits"] == pytest.approx(price)
        assert error["available_credits"] == pytest.approx(price * 0.5)
        quote = _estimate(c, model)
        assert quote["can_afford"] is False
        wait(c, first.json()["id"])
        after = c.get("/v1/credits").json()["member_limit"]
        assert after["used"] == pytest.approx(price)
        assert after["remaining"] == pytest.approx(price * 0.5)
    # Removing the cap lifts the limit.
    sandbox.admin.set_cap(tenant.member_id, None)
    with client(sandbox, tenant) as c:
        assert c.post("/v1/images", json=body).status_code == 200
        assert "member_limit" not in c.get("/v1/credits").json()


def test_plan_that_cannot_use_a_model_is_403_and_estimate_not_allowed(sandbox, tenant_factory):
    all_plans = {"free", "pro", "enterprise"}
    target = None
    for entry in models(sandbox):
        missing = all_plans - set(entry.get("plans") or all_plans)
        if missing:
            target = (entry, sorted(missing)[0])
            break
    assert target is not None, "the catalog should have a model some plan cannot use"
    entry, plan = target
    tenant = tenant_factory(plan=plan)
    body = next(iter(entry["example_request"].values()))
    with client(sandbox, tenant) as c:
        quote = _estimate(c, entry["id"])
        assert quote["allowed"] is False
        assert plan in quote["reason"]
        r = c.post(endpoint(entry["type"]), json=body)
    # Either the plan check (403) or, for an example needing assets, validation (422) first.
    if r.status_code != 422:
        assert_error(r, 403, "forbidden")
    assert [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]] == ["grant"]


def test_ledger_invariant_under_concurrent_submits(sandbox, tenant_factory):
    model, body = image_example(sandbox)
    with client(sandbox) as c:
        price = Decimal(str(_estimate(c, model)["credits_after_discount"]))
    affordable = 25
    tenant = tenant_factory(balance=float(price * affordable))
    statuses: list[int] = []
    ids: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        with client(sandbox, tenant) as c:
            for i in range(n):
                r = c.post("/v1/images", json={**body, "prompt": f"race {i}"})
                with lock:
                    statuses.append(r.status_code)
                    if r.status_code == 200:
                        ids.append(r.json()["id"])
                if i % 5 == 0:
                    ledger_totals(sandbox, tenant.org_id)  # holds mid-flight too

    threads = [threading.Thread(target=worker, args=(10,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(200) == affordable
    assert statuses.count(402) == 40 - affordable
    with client(sandbox, tenant) as c:
        for gen_id in ids:
            wait(c, gen_id)
    totals = ledger_totals(sandbox, tenant.org_id)
    assert totals["open_reservations"] == 0
    assert totals["charged"] == price * affordable
    assert totals["available"] == 0


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_video_and_audio_complete_with_real_outputs(sandbox, tenant, kind):
    _model, body = kind_example(sandbox, kind)
    with client(sandbox, tenant) as c:
        gen = c.post(endpoint(kind), json=body)
        assert gen.status_code == 200, gen.text
        done = wait(c, gen.json()["id"], timeout=120)
    assert done["status"] == "completed", done
    out = done["outputs"][0]
    assert out["content_type"].startswith(f"{kind}/")
    assert out["duration_seconds"]
    assert out["duration_seconds"] > 0
    ledger_totals(sandbox, tenant.org_id)

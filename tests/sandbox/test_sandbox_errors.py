"""The Error body on every non-2xx: shape, trace id, validation details, no stack traces."""

from __future__ import annotations

import pytest
from sandbox_helpers import assert_error, client, image_example


def test_unknown_route_is_not_found(sandbox, tenant):
    with client(sandbox, tenant) as c:
        assert_error(c.get("/v1/no-such-thing"), 404, "not_found")


def test_wrong_method_has_an_error_body(sandbox, tenant):
    with client(sandbox, tenant) as c:
        r = c.delete("/v1/credits")
    assert_error(r, 405, "client_error")


def test_unknown_body_field_is_422_with_details(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        r = c.post("/v1/images", json={**body, "frobnicate": 1})
    error = assert_error(r, 422, "validation_error")
    assert {"loc": ["body", "frobnicate"], "msg": "Extra inputs are not permitted",
            "type": "extra_forbidden"} in error["details"]  # fmt: skip
    assert "frobnicate" in error["message"]


@pytest.mark.parametrize("raw", [b"[1, 2]", b"{not json", b"", b'"text"', b"null"])
def test_body_must_be_a_json_object(sandbox, tenant, raw):
    with client(sandbox, tenant) as c:
        r = c.post("/v1/images", content=raw, headers={"Content-Type": "application/json"})
    error = assert_error(r, 422, "validation_error")
    assert error["details"]
    assert error["details"][0]["loc"][0] == "body"


def test_wrong_types_and_bounds_are_422(sandbox, tenant):
    with client(sandbox, tenant) as c:
        r = c.post("/v1/videos", json={"frames_per_second": 61, "num_frames": 41, "cfg_scale": "x"})
    error = assert_error(r, 422, "validation_error")
    locs = {tuple(d["loc"]) for d in error["details"]}
    assert {("body", "frames_per_second"), ("body", "num_frames"), ("body", "cfg_scale")} <= locs


def test_catalog_rules_are_422_with_details(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        r = c.post("/v1/images", json={**body, "model": "no-such-model"})
        error = assert_error(r, 422, "validation_error")
        assert any(d["loc"][:2] == ["body", "model"] for d in error["details"])
        r = c.post("/v1/videos", json={**body})  # an image model on the video endpoint
        assert_error(r, 422, "validation_error")


def test_malformed_generation_id_is_422_error_body(sandbox, tenant):
    """Documented choice: the standard Error body (not the bare ``detail`` array)."""
    with client(sandbox, tenant) as c:
        r = c.get("/v1/generations/not-a-uuid")
    error = assert_error(r, 422, "validation_error")
    assert error["details"][0]["loc"] == ["path", "generation_id"]


def test_bad_query_values_are_422(sandbox, tenant):
    with client(sandbox, tenant) as c:
        for params in ({"limit": 0}, {"limit": 101}, {"status": "done"}, {"after": "@@"},
                       {"created_after": "yesterday"}):  # fmt: skip
            assert_error(c.get("/v1/generations", params=params), 422, "validation_error")


def test_unknown_model_is_404(sandbox, tenant):
    with client(sandbox, tenant) as c:
        assert_error(c.get("/v1/models/no-such-model"), 404, "not_found")
        assert_error(c.get("/v1/models/no-such-model/estimate"), 404, "not_found")


def test_trace_id_header_on_success_too(sandbox, tenant):
    with client(sandbox, tenant) as c:
        r = c.get("/v1/credits")
    assert r.status_code == 200
    assert r.headers["x-trace-id"].startswith("trace_")
    assert len(r.headers["x-trace-id"]) == len("trace_") + 16

"""Odd values get a clear 4xx, never a 5xx, and no answer leaves a keep-alive connection broken:
each case is sent on one connection and followed on that same connection by a normal request."""

from __future__ import annotations

import json
from urllib.parse import quote, urlsplit

import pytest
from sandbox_faults import KeepAlive, api, png_bytes, register_upload, wait_generation


def _then_still_served(conn: KeepAlive, tenant) -> None:
    status, _, body = conn.request("GET", "/v1/credits", tenant.headers)
    assert status == 200, body


@pytest.mark.parametrize(
    "target",
    [
        "/v1/generations?created_after=" + quote("0001-01-01T00:00:00+05:00"),
        "/v1/generations?created_after=" + quote("9999-12-31T23:59:59-05:00"),
        "/v1/models/pixel-1/estimate?text_length=" + str(10**30),
        "/v1/models/voxa-tts/estimate?text_length=" + str(10**30),
        "/v1/models/voxa-tts/estimate?text_length=100000000",
        "/v1/models/pixel-pro/estimate?reference_image_count=" + str(10**9),
        "/v1/models/pixel-pro/estimate?params=" + quote("[" * 1000 + "]" * 1000),
    ],
    ids=lambda target: target[:70],
)
def test_odd_query_values_are_a_4xx_and_the_connection_lives(sandbox, tenant, target):
    with KeepAlive(sandbox.base_url) as conn:
        status, _, body = conn.request("GET", target, tenant.headers)
        assert 400 <= status < 500, body[:500]
        assert json.loads(body)["error"]["code"] == "validation_error"
        _then_still_served(conn, tenant)


def test_a_seed_beyond_64_bits_is_a_422_and_charges_nothing(sandbox, tenant):
    body = {"model": "tunesmith", "prompt": "x", "duration_seconds": 10, "seed": 10**30}
    with KeepAlive(sandbox.base_url) as conn:
        status, _, raw = conn.request("POST", "/v1/audio", tenant.headers, body)
        assert status == 422, raw[:500]
        _then_still_served(conn, tenant)
    with api(sandbox, tenant) as c:
        assert c.get("/v1/credits").json()["reserved"] == 0


def test_json_nested_past_the_parsers_limit_in_a_large_body_is_a_422(sandbox, tenant):
    depth = 100_000
    body = b'{"model": "pixel-1", "prompt": "x", "deep": ' + b"[" * depth + b"]" * depth + b"}"
    with KeepAlive(sandbox.base_url) as conn:
        headers = {**tenant.headers, "Content-Type": "application/json"}
        status, _, raw = conn.request("POST", "/v1/images", headers, body)
        assert status == 422, raw[:500]
        _then_still_served(conn, tenant)


@pytest.mark.parametrize("field", ["balance", "grant"])
def test_admin_amounts_beyond_what_the_ledger_holds_are_a_422(sandbox, tenant, field):
    with KeepAlive(sandbox.base_url) as conn:
        headers = {"X-Admin-Token": sandbox.admin_token}
        status, _, raw = conn.request(
            "PATCH", f"/admin/orgs/{tenant.org_id}", headers, {field: 1e300}
        )
        assert status == 422, raw[:500]
        _then_still_served(conn, tenant)
    assert sandbox.admin.get_org(tenant.org_id).balance == 1000


def _signed_path(url: str, sig: str) -> str:
    parts = urlsplit(url)
    query = "&".join(
        f"sig={quote(sig)}" if p.startswith("sig=") else p for p in parts.query.split("&")
    )
    return f"{parts.path}?{query}"


@pytest.mark.parametrize("sig", ["é" * 64, "\u2603"])
def test_odd_signatures_on_upload_and_download_urls_are_403(sandbox, tenant, sig):
    data = png_bytes()
    with api(sandbox, tenant) as c:
        ticket = register_upload(c, data)
        gen = c.post("/v1/images", json={"model": "pixel-1", "prompt": "odd signature"}).json()
        output = wait_generation(c, gen["id"])["outputs"][0]
    with KeepAlive(sandbox.base_url) as conn:
        put = _signed_path(ticket["upload_url"], sig)
        status, _, body = conn.request("PUT", put, {"Content-Type": "image/png"}, data)
        assert status == 403, body
        assert json.loads(body)["error"]["code"] == "forbidden"
        status, _, body = conn.request("GET", _signed_path(output["url"], sig))
        assert status == 403, body
        _then_still_served(conn, tenant)


def test_an_internal_error_leaves_the_connection_usable(sandbox, tenant):
    """A 500 is the spec's body with a trace id, and the next request on the same keep-alive
    connection is served (the server keeps the connection it answered cleanly)."""
    with KeepAlive(sandbox.base_url) as conn, sandbox.admin.config_changed(error_next_requests=1):
        status, headers, body = conn.request("GET", "/v1/credits", tenant.headers)
        assert status == 500, body
        error = json.loads(body)["error"]
        assert error["code"] == "internal_error"
        assert error["trace_id"] == headers["x-trace-id"]
        assert "Traceback" not in body.decode()
        _then_still_served(conn, tenant)

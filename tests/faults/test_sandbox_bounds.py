"""Bounded input: every bound the catalog states is enforced, bodies and arrays are capped, and
a refused request reserves nothing (the spec's Error body: 422, or 413 for an oversized body)."""

from __future__ import annotations

import json

import httpx
import pytest
from sandbox_faults import (
    ENDPOINTS,
    api,
    assert_spec_error,
    credits,
    examples,
    generation_count,
    image_request,
)

MB = 1 << 20


def _locs(error: dict) -> list[list]:
    return [d["loc"] for d in error["details"]]


def test_every_string_bound_the_catalog_states_is_enforced(sandbox, tenant):
    tried = 0
    with api(sandbox, tenant) as c:
        before = credits(c)
        for entry, example in examples(sandbox):
            for name, schema in entry["parameters"].items():
                limit = schema.get("max_length")
                if schema["type"] != "string" or limit is None or "enum" in schema:
                    continue
                body = {**example, name: "x" * (limit + 1)}
                r = c.post(ENDPOINTS[entry["type"]], json=body)
                error = assert_spec_error(r, 422, "validation_error")
                assert ["body", name] in _locs(error), (entry["id"], name, error)
                tried += 1
        assert credits(c) == before
        assert generation_count(c) == 0
    assert tried >= 20  # prompts, negative prompts, lyrics, speech text, variants, ids, ...


def test_a_prompt_of_exactly_the_stated_length_is_accepted(sandbox, tenant):
    with api(sandbox, tenant) as c:
        limit = next(e for e in examples(sandbox) if e[0]["id"] == "pixel-1")[0]["parameters"][
            "prompt"
        ]["max_length"]
        assert limit == 4000
        ok = c.post("/v1/images", json={**image_request(), "prompt": "y" * limit})
        assert ok.status_code == 200, ok.text
        too_long = c.post("/v1/images", json={**image_request(), "prompt": "y" * (limit + 1)})
        error = assert_spec_error(too_long, 422, "validation_error")
        assert error["details"][0]["type"] == "string_too_long"
        assert generation_count(c) == 1


@pytest.mark.parametrize("megabytes", [10, 50])
def test_an_oversized_body_is_413_before_anything_is_reserved(sandbox, tenant, megabytes):
    body = json.dumps({**image_request(), "prompt": "z" * (megabytes * MB)}).encode()
    with api(sandbox, tenant) as c:
        before = credits(c)
        r = c.post("/v1/images", content=body, headers={"Content-Type": "application/json"})
        error = assert_spec_error(r, 413, "client_error")
        assert error["details"] is None
        assert len(r.content) < 2000  # nothing of the body is echoed
        assert credits(c) == before
        assert generation_count(c) == 0


def test_a_chunked_body_is_cut_off_at_the_cap(sandbox, tenant):
    """No Content-Length to refuse up front: the body is counted as it arrives."""

    def chunks():
        yield b'{"model": "pixel-1", "prompt": "'
        for _ in range(12):
            yield b"w" * MB
        yield b'"}'

    with api(sandbox, tenant) as c:
        before = credits(c)
        r = c.post("/v1/images", content=chunks(), headers={"Content-Type": "application/json"})
        assert_spec_error(r, 413, "client_error")
        assert credits(c) == before
        assert generation_count(c) == 0


@pytest.mark.parametrize(
    ("path", "field", "item"),
    [
        ("/v1/images", "reference_images", "asset_example_image"),
        ("/v1/audio", "prompt_tags", "lo-fi"),
        ("/v1/audio", "segments", {"voice_name": "Aria", "text": "hi"}),
        ("/v1/videos", "keyframes", {"image": "asset_example_image", "frame_index": 0}),
    ],
)
def test_arrays_are_capped_in_every_body(sandbox, tenant, path, field, item):
    with api(sandbox, tenant) as c:
        r = c.post(path, json={field: [item] * 10_000})
        error = assert_spec_error(r, 422, "validation_error")
        assert {"loc": ["body", field], "type": "too_long"}.items() <= error["details"][0].items()
        assert generation_count(c) == 0


def test_thousands_of_unknown_keys_give_a_small_422(sandbox, tenant):
    body = {**image_request(), **{f"unknown_{i}": i for i in range(20_000)}}
    with api(sandbox, tenant) as c:
        r = c.post("/v1/images", json=body)
        error = assert_spec_error(r, 422, "validation_error")
        assert len(error["details"]) == 50
        assert all(d["type"] == "extra_forbidden" for d in error["details"])
        assert "20000" in error["message"]
        assert len(r.content) < 64 * 1024


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_not_declared_json_is_refused(sandbox, tenant, content_type):
    """JSON sent as text/plain or a form is not guessed at (see docs/wire-contract.md)."""
    with api(sandbox, tenant) as c:
        raw = json.dumps(image_request())
        r = c.post("/v1/images", content=raw, headers={"Content-Type": content_type})
        error = assert_spec_error(r, 422, "validation_error")
        assert error["details"][0]["loc"] == ["header", "Content-Type"]
        assert generation_count(c) == 0
        as_json = c.post(
            "/v1/images", content=raw, headers={"Content-Type": "application/json; charset=utf-8"}
        )
        assert as_json.status_code == 200, as_json.text


def test_the_admin_api_is_capped_too(sandbox):
    r = httpx.post(
        f"{sandbox.base_url}/admin/orgs",
        content=b'{"name": "' + b"n" * (2 * MB) + b'"}',
        headers={"X-Admin-Token": sandbox.admin_token, "Content-Type": "application/json"},
    )
    assert_spec_error(r, 413, "client_error")

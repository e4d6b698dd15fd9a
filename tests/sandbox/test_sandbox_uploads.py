"""Uploads through signed URLs, output URLs that expire, and outputs used as references."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from sandbox_helpers import (
    assert_error,
    client,
    endpoint,
    image_example,
    models,
    png_bytes,
    upload,
    wait,
)


def _register(c, data: bytes, content_type: str = "image/png") -> dict:
    r = c.post(
        "/v1/uploads",
        json={"filename": "ref.png", "content_type": content_type, "size_bytes": len(data)},
    )
    assert r.status_code == 200, r.text
    return r.json()


def _with_query(url: str, **changes) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query.update(changes)
    return urlunsplit(parts._replace(query=urlencode(query)))


def test_upload_happy_path(sandbox, tenant):
    data = png_bytes(64, 48)
    with client(sandbox, tenant) as c:
        ticket = _register(c, data)
    assert ticket["asset_id"].startswith("asset_")
    assert len(ticket["asset_id"]) == 30
    assert ticket["required_headers"] == {"Content-Type": "image/png",
                                          "Content-Length": str(len(data))}  # fmt: skip
    assert ticket["media_type"] == "image"
    assert ticket["status"] == "pending"
    assert "/files/upload/" in ticket["upload_url"]
    assert "/v1/" not in ticket["upload_url"]
    r = httpx.put(ticket["upload_url"], content=data, headers=ticket["required_headers"])
    assert r.status_code == 200, r.text
    assert r.json() == {"asset_id": ticket["asset_id"], "status": "ready",
                        "size_bytes": len(data)}  # fmt: skip
    again = httpx.put(ticket["upload_url"], content=data, headers=ticket["required_headers"])
    assert_error(again, 409, "conflict")


def test_tampered_upload_url_is_403(sandbox, tenant):
    data = png_bytes()
    with client(sandbox, tenant) as c:
        ticket = _register(c, data)
    url = ticket["upload_url"]
    forged_expiry = _with_query(url, expires=str(int(time.time()) + 86400))
    for bad in (forged_expiry, _with_query(url, sig="0" * 64), url.split("?")[0]):
        r = httpx.put(bad, content=data, headers=ticket["required_headers"])
        assert_error(r, 403, "forbidden")


def test_expired_upload_url_is_403(sandbox, tenant):
    data = png_bytes()
    with sandbox.admin.config_changed(upload_url_ttl_seconds=1), client(sandbox, tenant) as c:
        ticket = _register(c, data)
    time.sleep(2.1)
    r = httpx.put(ticket["upload_url"], content=data, headers=ticket["required_headers"])
    error = assert_error(r, 403, "forbidden")
    assert "expired" in error["message"]


def test_wrong_or_missing_headers_are_422(sandbox, tenant):
    data = png_bytes()
    with client(sandbox, tenant) as c:
        ticket = _register(c, data)
    url = ticket["upload_url"]
    wrong_type = httpx.put(url, content=data, headers={"Content-Type": "image/jpeg"})
    assert "Content-Type" in assert_error(wrong_type, 422, "validation_error")["message"]
    no_type = httpx.put(url, content=data)
    assert_error(no_type, 422, "validation_error")

    def chunks():
        yield data

    no_length = httpx.put(url, content=chunks(), headers={"Content-Type": "image/png"})
    assert "Content-Length" in assert_error(no_length, 422, "validation_error")["message"]
    wrong_size = httpx.put(url, content=data + b"\0", headers={"Content-Type": "image/png"})
    error = assert_error(wrong_size, 422, "validation_error")
    assert "size" in error["message"]
    ok = httpx.put(url, content=data, headers=ticket["required_headers"])
    assert ok.status_code == 200


def test_bytes_that_are_not_the_declared_type_are_422(sandbox, tenant):
    junk = b"definitely not a png" * 10
    with client(sandbox, tenant) as c:
        ticket = _register(c, junk)
    r = httpx.put(ticket["upload_url"], content=junk, headers=ticket["required_headers"])
    assert "image/png" in assert_error(r, 422, "validation_error")["message"]


def test_registration_rules(sandbox, tenant):
    with client(sandbox, tenant) as c:
        for body in (
            {"filename": "a.gif", "content_type": "image/gif", "size_bytes": 10},
            {"filename": "a.png", "content_type": "image/png", "size_bytes": 0},
            {"filename": "a.png", "content_type": "image/png", "size_bytes": 3 * 1024**3},
            {"filename": "a.png", "content_type": "image/png"},
        ):
            assert_error(c.post("/v1/uploads", json=body), 422, "validation_error")


def _reference_model(sandbox):
    """An image model with reference_images and an example request using them."""
    for entry in models(sandbox, "image"):
        if entry.get("parameters", {}).get("reference_images"):
            for mode in entry.get("modes", []):
                if "reference_images" in mode.get("required", []) + mode.get("optional", []):
                    return entry, mode
    return None, None


def test_output_and_upload_chain_as_references(sandbox, tenant):
    entry, mode = _reference_model(sandbox)
    assert entry is not None, "the catalog should have an image model taking reference_images"
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        uploaded = upload(c, png_bytes(80, 80))
        first = wait(c, c.post("/v1/images", json=body).json()["id"])
        output_asset = first["outputs"][0]["asset_id"]
        request = dict(entry["example_request"][mode["id"]])
        request["reference_images"] = [output_asset, uploaded]
        r = c.post(endpoint("image"), json=request)
        assert r.status_code == 200, r.text
        done = wait(c, r.json()["id"])
    assert done["status"] == "completed", done


def test_reference_rules(sandbox, tenant, tenant_factory):
    entry, mode = _reference_model(sandbox)
    request = dict(entry["example_request"][mode["id"]])
    with client(sandbox, tenant) as c:
        pending_asset = _register(c, png_bytes())["asset_id"]
        for refs in (["asset_000000000000000000000000"], [pending_asset]):
            r = c.post("/v1/images", json={**request, "reference_images": refs})
            assert_error(r, 422, "validation_error")
        own = upload(c, png_bytes())
    other = tenant_factory()
    with client(sandbox, other) as c:
        r = c.post("/v1/images", json={**request, "reference_images": [own]})
        assert_error(r, 422, "validation_error")


def test_output_urls_need_no_key_and_expire(sandbox, tenant):
    _model, body = image_example(sandbox)
    with client(sandbox, tenant) as c:
        gen = wait(c, c.post("/v1/images", json=body).json()["id"])
        url = gen["outputs"][0]["url"]
        r = httpx.get(url)  # no Authorization header at all
        assert r.status_code == 200
        assert r.headers["content-type"] == gen["outputs"][0]["content_type"]
        assert r.content[:4] in (b"\x89PNG", b"RIFF") or r.content[:3] == b"\xff\xd8\xff"
        assert_error(httpx.get(_with_query(url, sig="f" * 64)), 403, "forbidden")
        # a lifetime a loaded machine's next request is well within, and then waited out
        with sandbox.admin.config_changed(output_url_ttl_seconds=3):
            short = c.get(f"/v1/generations/{gen['id']}").json()["outputs"][0]["url"]
            answered = time.monotonic()
        assert httpx.get(short).status_code == 200
    # expiry is in whole seconds: a second more than the lifetime, from the answer
    time.sleep(max(0.0, answered + 4.1 - time.monotonic()))
    error = assert_error(httpx.get(short), 403, "forbidden")
    assert "expired" in error["message"]


@pytest.mark.slow
def test_large_upload_streams_with_bounded_memory(sandbox, tenant):
    """A 256 MiB WAV goes to disk without the server's memory growing by its size."""
    import psutil  # a test dependency (pyproject: test extra)

    server = psutil.Process(sandbox.process.pid)
    size = 256 * 1024**2
    header = _wav_header(size - 44)
    with client(sandbox, tenant) as c:
        r = c.post(
            "/v1/uploads",
            json={"filename": "big.wav", "content_type": "audio/wav", "size_bytes": size},
        )
        ticket = r.json()
    rss_before = server.memory_info().rss
    peak = [rss_before]

    def body():
        yield header
        block = b"\0" * (1 << 20)
        sent, chunks = len(header), 0
        while sent < size:
            piece = block[: size - sent]
            sent += len(piece)
            chunks += 1
            if chunks % 16 == 0:
                peak[0] = max(peak[0], server.memory_info().rss)
            yield piece

    put = httpx.put(
        ticket["upload_url"], content=body(), headers=ticket["required_headers"], timeout=120
    )
    assert put.status_code == 200, put.text
    peak[0] = max(peak[0], server.memory_info().rss)
    assert peak[0] - rss_before < 64 * 1024**2


def _wav_header(data_bytes: int, rate: int = 44100) -> bytes:
    import struct

    return (
        b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVE"
        + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data" + struct.pack("<I", data_bytes)
    )  # fmt: skip

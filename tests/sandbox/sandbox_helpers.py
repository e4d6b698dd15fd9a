"""Small helpers for the sandbox's own tests: plain httpx over loopback, catalog-driven bodies.

Request bodies come from the catalog's ``example_request`` (so these tests follow the catalog
rather than hard-coding its models), picked by what a test needs: a cheap image model, a model
taking reference images, a model some plan cannot use.
"""

from __future__ import annotations

import io
import time
from decimal import Decimal
from typing import Any

import httpx

TERMINAL = {"completed", "failed"}


def client(sandbox, tenant=None, api_key: str | None = None) -> httpx.Client:
    key = api_key or (tenant.api_key if tenant is not None else sandbox.api_key)
    return httpx.Client(
        base_url=sandbox.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def models(sandbox, type_: str | None = None) -> list[dict]:
    with client(sandbox) as c:
        params = {"type": type_} if type_ else {}
        r = c.get("/v1/models", params=params)
        r.raise_for_status()
        return r.json()["data"]


def examples(entry: dict) -> list[dict]:
    return [dict(body) for body in entry.get("example_request", {}).values()]


_ASSET_TYPES = {"asset", "asset_list", "keyframes", "elements"}


def needs_assets(entry: dict, body: dict) -> bool:
    params = entry.get("parameters", {})
    return any(params.get(name, {}).get("type") in _ASSET_TYPES for name in body) or any(
        name in body for name in ("source_generation_id",)
    )


def image_example(sandbox) -> tuple[str, dict]:
    """(model id, body) of an image request needing no assets, cheapest first."""
    best = None
    for entry in models(sandbox, "image"):
        for body in examples(entry):
            if needs_assets(entry, body):
                continue
            with client(sandbox) as c:
                q = c.get(f"/v1/models/{entry['id']}/estimate").json()
            price = q.get("credits", 1e9) if isinstance(q, dict) else 1e9
            if best is None or price < best[0]:
                best = (price, entry["id"], body)
    assert best is not None, "the catalog has no image model with an asset-free example"
    return best[1], best[2]


def kind_example(sandbox, kind: str) -> tuple[str, dict]:
    """(model id, body) of any asset-free example request of that media kind."""
    for entry in models(sandbox, kind):
        for body in examples(entry):
            if not needs_assets(entry, body):
                return entry["id"], body
    raise AssertionError(f"no asset-free {kind} example in the catalog")


def endpoint(kind: str) -> str:
    return {"image": "/v1/images", "video": "/v1/videos", "audio": "/v1/audio"}[kind]


def with_marker(body: dict, marker: str) -> dict:
    body = dict(body)
    if "prompt" in body or "text" not in body:
        body["prompt"] = f"{body.get('prompt', '')} {marker}".strip()
    else:
        body["text"] = f"{body['text']} {marker}"
    return body


def wait(c: httpx.Client, generation_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        r = c.get(f"/v1/generations/{generation_id}")
        r.raise_for_status()
        gen = r.json()
        if gen["status"] in TERMINAL:
            return gen
        if time.monotonic() > deadline:
            raise AssertionError(f"generation {generation_id} still pending after {timeout}s")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)


def assert_error(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    error = body["error"]
    assert error["code"] == code, body
    assert isinstance(error["message"], str)
    assert error["message"]
    assert error["trace_id"]
    assert error["trace_id"].startswith("trace_")
    assert response.headers["x-trace-id"] == error["trace_id"]
    assert "Traceback" not in response.text
    return error


def ledger_totals(sandbox, org_id: str) -> dict[str, Decimal]:
    """Balances from the org row, checked against a replay of every ledger entry."""
    ledger = sandbox.admin.ledger(org_id)
    replay = {"granted": Decimal(0), "available": Decimal(0), "reserved": Decimal(0),
              "charged": Decimal(0)}  # fmt: skip
    reservations: dict[str, Decimal] = {}
    for e in ledger["entries"]:
        amount = Decimal(str(e["amount"]))
        if e["kind"] == "grant":
            replay["granted"] += amount
            replay["available"] += amount
        elif e["kind"] == "reserve":
            replay["available"] -= amount
            replay["reserved"] += amount
            reservations[e["generation_id"]] = amount
        elif e["kind"] == "charge":
            replay["reserved"] -= amount
            replay["charged"] += amount
            assert reservations.pop(e["generation_id"]) == amount
        elif e["kind"] == "refund":
            replay["reserved"] -= amount
            replay["available"] += amount
            assert reservations.pop(e["generation_id"]) == amount
    totals = {
        "granted": Decimal(str(ledger["granted"])),
        "available": Decimal(str(ledger["balance"])),
        "reserved": Decimal(str(ledger["reserved"])),
        "charged": Decimal(str(ledger["charged"])),
    }
    assert totals == replay, (totals, replay)
    assert totals["available"] + totals["reserved"] + totals["charged"] == totals["granted"]
    totals["open_reservations"] = Decimal(len(reservations))
    return totals


def png_bytes(width: int = 64, height: int = 48) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 90)).save(buf, format="PNG")
    return buf.getvalue()


def upload(c: httpx.Client, data: bytes, content_type: str = "image/png", name="ref.png") -> Any:
    r = c.post(
        "/v1/uploads",
        json={"filename": name, "content_type": content_type, "size_bytes": len(data)},
    )
    assert r.status_code == 200, r.text
    ticket = r.json()
    put = httpx.put(ticket["upload_url"], content=data, headers=ticket["required_headers"])
    assert put.status_code == 200, put.text
    return ticket["asset_id"]

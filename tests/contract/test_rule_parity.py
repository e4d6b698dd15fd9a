"""The client's rule engine and the service agree, request by request.

For every model and mode of the sandbox's catalog, requests are generated from the catalog
entry itself: the ready-to-send example, then one mutation per rule the entry states (a
required field dropped, a value outside the allowed list, a number past its range, a number off
its step, text past its length, a list past its count, a field of another mode, and each
cross-field rule broken). Each request is judged twice: locally by
``mediagen.pricing.catalog.Catalog.validate`` and for real by a submit to the sandbox.
The verdicts must match: accepted locally iff accepted by the service, and the same fields named.

The only checks the client cannot make are the ones that need the organization's data (does an
asset exist, is it ready, is it the right media); the generated requests use the sample assets
every organization has, so those checks pass on both sides.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mediagen.pricing.catalog import Catalog

ENDPOINT = {"image": "/v1/images", "video": "/v1/videos", "audio": "/v1/audio"}
ALWAYS = {"model", "mode", "idempotency_key", "project_id"}


@pytest.fixture(scope="module")
def http(sandbox, tenant_factory) -> Iterator[httpx.Client]:
    tenant = tenant_factory(balance=10_000_000.0, plan="enterprise")
    headers = {"Authorization": f"Bearer {tenant.api_key}"}
    with (
        sandbox.admin.config_changed(rate_limit_per_second=10_000, rate_limit_burst=10_000),
        httpx.Client(base_url=sandbox.base_url, headers=headers, timeout=60) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def entries(http) -> list[dict]:
    listed = http.get("/v1/models")
    listed.raise_for_status()
    found = [http.get(f"/v1/models/{m['id']}").json() for m in listed.json()["data"]]
    for entry in found:
        for example in (entry.get("example_request") or {}).values():
            for name, value in example.items():
                if isinstance(value, (list, dict)):
                    SAMPLES.setdefault(name, value)
    return found


def _placeholder(media: str | None) -> str:
    return f"asset_example_{media or 'image'}"


#: Values seen in any model's ready-to-send examples, for structured fields (plans, shots, ...).
SAMPLES: dict[str, Any] = {}


def _valid_value(entry: dict, mode: dict, name: str, example: dict) -> Any:
    """A value of ``name`` the service accepts on its own (cross-field rules aside)."""
    if name in example:
        return copy.deepcopy(example[name])
    if name in SAMPLES:
        return copy.deepcopy(SAMPLES[name])
    if name in (mode.get("defaults") or {}):
        return copy.deepcopy(mode["defaults"][name])
    schema = (entry.get("parameters") or {}).get(name) or {}
    kind = schema.get("type")
    allowed = Catalog(entry).allowed(name, mode["id"], example.get("tier"))
    if allowed:
        return allowed[0]
    low, high = Catalog(entry).range(name, mode["id"])
    if kind in ("integer", "number"):
        return low if low is not None else (high if high is not None else 1)
    if kind == "boolean":
        return True
    if kind == "asset":
        return _placeholder(schema.get("media"))
    if kind == "asset_list":
        return [_placeholder(schema.get("media"))]
    if kind == "string_list":
        return ["calm"]
    return "a quiet harbour at dawn"


def _mutations(entry: dict, mode: dict) -> Iterator[tuple[str, dict]]:
    """(what was broken, request) pairs, the example first."""
    examples = entry.get("example_request") or {}
    example = dict(examples.get(mode["id"]) or {})
    example.setdefault("model", entry["id"])
    yield "example", example
    fields = set(mode.get("required") or []) | set(mode.get("optional") or [])
    for name in mode.get("required") or []:
        body = {k: v for k, v in example.items() if k != name}
        yield f"drop required {name}", body
    for name in sorted(mode.get("allowed") or {}):
        schema = (entry.get("parameters") or {}).get(name) or {}
        bad = 987_654 if schema.get("type") in ("integer", "number") else "no-such-value"
        yield f"{name} not allowed", {**example, name: bad}
    for name, bounds in sorted((mode.get("ranges") or {}).items()):
        if bounds.get("maximum") is not None:
            yield f"{name} above range", {**example, name: bounds["maximum"] + 1}
        if bounds.get("minimum") is not None:
            yield f"{name} below range", {**example, name: bounds["minimum"] - 1}
    for name, limit in sorted((mode.get("max_counts") or {}).items()):
        one = _valid_value(entry, mode, name, example)
        item = one[0] if isinstance(one, list) and one else one
        yield f"{name} over count", {**example, name: [item] * (limit + 1)}
    for name in sorted(fields - ALWAYS):
        yield from _bound_mutations(entry, mode, name, example)
    for name in sorted(fields & set(example) - ALWAYS):
        value = example[name]
        wrong = 12345 if isinstance(value, (str, list, dict)) else "twelve"
        yield f"{name} of the wrong type", {**example, name: wrong}
    others = sorted(set(entry.get("parameters") or {}) - fields - ALWAYS)
    if others:
        name = others[0]
        yield f"{name} from another mode", {**example, name: _valid_value(entry, mode, name, {})}
    for i, rule in enumerate(entry.get("rules") or []):
        kind = rule.get("kind")
        names = [n for n in rule.get("fields") or [] if n in fields]
        if kind == "mutually_exclusive" and len(names) > 1:
            body = dict(example)
            for n in names[:2]:
                body[n] = _valid_value(entry, mode, n, example)
            yield f"rule {i} {kind}", body
        elif kind == "one_of_required" and names:
            yield f"rule {i} {kind}", {k: v for k, v in example.items() if k not in names}
        elif kind == "requires" and rule.get("field") in fields:
            body = {k: v for k, v in example.items() if k not in rule.get("needs", [])}
            body[rule["field"]] = _valid_value(entry, mode, rule["field"], example)
            yield f"rule {i} {kind}", body
        elif kind == "max_duration" and rule.get("field") in fields:
            when = rule.get("when") or {}
            if all(k in fields for k in when):
                body = {**example, **when, rule["field"]: rule["maximum"] + 1}
                yield f"rule {i} {kind}", body


def _bound_mutations(
    entry: dict, mode: dict, name: str, example: dict
) -> Iterator[tuple[str, dict]]:
    """A field's own bounds broken: past the range its parameter and mode give, off its step,
    one character over its length."""
    schema = (entry.get("parameters") or {}).get(name) or {}
    low, high = Catalog(entry).range(name, mode["id"])
    if high is not None:
        yield f"{name} past its maximum", {**example, name: high + 1}
    if low is not None:
        yield f"{name} under its minimum", {**example, name: low - 1}
    step = schema.get("multiple_of")
    if step:
        off = (low or 0) + step + (step // 2 if isinstance(step, int) else step / 2)
        yield f"{name} off its step", {**example, name: off}
    if schema.get("max_length"):
        yield f"{name} too long", {**example, name: "x" * (schema["max_length"] + 1)}


def _service_verdict(http: httpx.Client, kind: str, body: dict) -> set[str] | None:
    """None when the service accepts the request, else the top-level fields its 422 names."""
    response = http.post(ENDPOINT[kind], json=body)
    if response.status_code == 200:
        return None
    assert response.status_code == 422, (response.status_code, response.text)
    return _fields(response.json()["error"]["details"] or [])


def _client_verdict(entry: dict, kind: str, body: dict) -> set[str] | None:
    return _fields(Catalog(entry).validate(body, kind=kind)) or None


def _fields(details: list[dict]) -> set[str]:
    """The top-level request field each 422 detail is about (``loc`` is body, field, ...)."""
    return {str(d["loc"][1]).split(".")[0] for d in details if len(d["loc"]) > 1}


def test_every_model_and_mode_gets_the_same_verdict_locally_and_from_the_service(http, entries):
    checked, disagreements = 0, []
    for entry in entries:
        for mode in entry["modes"]:
            for broken, body in _mutations(entry, mode):
                ours = _client_verdict(entry, entry["type"], body)
                theirs = _service_verdict(http, entry["type"], body)
                checked += 1
                if ours != theirs:
                    where = f"{entry['id']} / {mode['id']} / {broken}"
                    disagreements.append(f"{where}: client {ours}, service {theirs}")
    assert not disagreements, f"{len(disagreements)} of {checked}:\n" + "\n".join(disagreements)
    assert checked > 100  # the generator really exercised the catalog

"""The price computed locally from a catalog entry equals the service's estimate, to the cent.

For every model and mode the sandbox serves, requests are generated from the entry itself: the
mode's ready-to-send example, with every field the mode's ``price`` object names (table keys,
multipliers, per-input fields, the output count, derived fields and every source of the
billable duration) drawn from its allowed values, range or shape. Each request is priced twice:
locally by ``mediagen.pricing._local_price.local_price`` from the served entry, and for real by the
estimate endpoint (over loopback, with the query the client builds for that request). Where the
local price is unknown because it counts an input file's seconds, it must say so, and with the
length the service measured it must match too.
"""

from __future__ import annotations

import copy
import string
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import mediagen
from mediagen.pricing._local_price import local_price
from mediagen.pricing.catalog import Catalog
from mediagen_sandbox.catalog import list_models

MODES = [(e["id"], m["id"]) for e in list_models() for m in e["modes"]]
ABSENT = object()


@pytest.fixture(scope="module")
def client(sandbox, tenant_factory) -> Iterator[mediagen.Client]:
    tenant = tenant_factory(balance=10_000_000.0, plan="enterprise")
    with (
        sandbox.admin.config_changed(rate_limit_per_second=10_000, rate_limit_burst=10_000),
        mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url) as made,
    ):
        yield made


@pytest.fixture(scope="module")
def entries(client) -> dict[str, dict]:
    return {m.id: client.models.get(m.id).raw for m in client.models.list()}


def priced_fields(mode: dict) -> list[str]:
    """Every request field the mode's price object reads, in a stable order."""
    price = mode["price"]
    names = str(price.get("by") or "").split("|")
    names += [*price.get("multipliers", {}), *price.get("per_input", {}), price.get("count")]
    for target, rule in price.get("derive", {}).items():
        names += [rule["from"], target]
    for source in price.get("duration", []):
        names += [*source.get("when", {}), source.get("field"), source.get("asset")]
        names += [str(source.get("sum") or "").split(".")[0], *source.get("divide", [])]
    names += [path.split("[")[0] for path in price.get("characters", [])]
    taken = set(mode["required"]) | set(mode["optional"])
    return [n for n in dict.fromkeys(names) if n in taken]


WORDS = st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=300).filter(str.strip)


def _values(entry: dict, mode: dict, name: str) -> st.SearchStrategy:
    """The values ``name`` may take in ``mode``, from the entry's own bounds and lists."""
    catalog = Catalog(entry)
    schema = entry["parameters"][name]
    kind, media = schema["type"], schema.get("media")
    rule = mode["allowed"].get(name)
    if isinstance(rule, dict):
        return st.sampled_from(sorted({v for vs in rule["by_tier"].values() for v in vs}))
    allowed = catalog.allowed(name, mode["id"])
    if allowed and kind != "voice":
        return st.sampled_from(allowed)
    low, high = catalog.range(name, mode["id"])
    if kind in ("integer", "number"):
        low, high = int(low if low is not None else 1), int(min(high or 60, 600))
        step = int(schema.get("multiple_of") or 1)
        whole = st.integers(-(-low // step), high // step).map(lambda n: n * step)
        return whole if kind == "integer" else st.one_of(whole, whole.map(lambda n: n + 0.5))
    if kind == "boolean":
        return st.booleans()
    if kind == "asset":
        return st.just(f"asset_example_{media}")
    if kind == "asset_list":
        most = mode["max_counts"].get(name, 3)
        return st.lists(st.just(f"asset_example_{media}"), min_size=1, max_size=most)
    if kind == "multi_prompt":
        shot = st.fixed_dictionaries({"prompt": WORDS, "duration": st.integers(1, 10)})
        return st.lists(shot, min_size=1, max_size=mode["max_counts"].get(name, 6))
    if kind == "composition_plan":
        part = st.fixed_dictionaries({"name": WORDS, "duration_seconds": st.integers(1, 20)})
        return st.fixed_dictionaries({"sections": st.lists(part, min_size=1, max_size=4)})
    if kind == "segments":
        voices = st.sampled_from([v["name"] for v in entry["voices"]])
        line = st.fixed_dictionaries({"voice_name": voices, "text": WORDS})
        return st.lists(line, min_size=1, max_size=4)
    return WORDS


def _exclusive(entry: dict, name: str) -> set[str]:
    """Fields a catalog rule forbids beside ``name``."""
    out: set[str] = set()
    for rule in entry["rules"]:
        if rule["kind"] == "mutually_exclusive" and name in rule["fields"]:
            out |= set(rule["fields"]) - {name}
    return out


@st.composite
def requests(draw, entry: dict, mode: dict) -> dict:
    """A valid request of ``mode``: its example with every priced field drawn (or left out)."""
    body = copy.deepcopy(entry["example_request"][mode["id"]])
    body.setdefault("model", entry["id"])
    for name in priced_fields(mode):
        value = draw(_values(entry, mode, name))
        if name not in mode["required"] and draw(st.booleans()):
            value = ABSENT
        if value is ABSENT:
            body.pop(name, None)
            continue
        body[name] = value
        for other in _exclusive(entry, name):
            body.pop(other, None)
    return _service_rules(mode, body)


def _service_rules(mode: dict, body: dict) -> dict:
    """What the service checks beyond the catalog's rules (docs/wire-contract.md): a shot list
    only with shot_type customize (which then makes the length), a prompt otherwise, frames per
    second giving 2 to 7.5 s, one alias per named reference, a composition plan within the
    model's duration range."""
    names = body.get("reference_names") or {}
    for key in [k for k in names if isinstance(body.get(k), list)]:
        names[key] = [f"ref{i}" for i in range(len(body[key]))]
    if body.get("shot_type") == "customize":
        assume(body.get("multi_prompt"))
        assume(sum(s["duration"] for s in body["multi_prompt"]) <= 30)
        body.pop("duration_seconds", None)
    elif body.get("shot_type") == "intelligent":
        body.pop("multi_prompt", None)
        body.setdefault("prompt", "A lighthouse at dusk")
    if "num_frames" in body or "frames_per_second" in body:
        seconds = body.get("num_frames", 80) / body.get("frames_per_second", 16)
        assume(2 <= seconds <= 7.5)
    if "composition_plan" in body:
        seconds = sum(s["duration_seconds"] for s in body["composition_plan"]["sections"])
        bounds = mode["ranges"]["duration_seconds"]
        assume(bounds["minimum"] <= seconds <= bounds["maximum"])
    return body


def _valid(entry: dict, body: dict) -> bool:
    return not Catalog(entry).validate(body, kind=entry["type"])


def disagreement(client: mediagen.Client, entry: dict, body: dict) -> str | None:
    """None when the local price equals the service's estimate for ``body``, else what differs.

    A price that counts an input file's seconds is unknown locally and must name that file;
    given the length the service measured, it must then match as well.
    """
    quote = client.models.estimate_request(body)
    ours = local_price(entry, body)
    if not ours.known:
        field = _file_priced(entry, body)
        if field is None or field not in str(ours.unknown):
            return f"local price unknown ({ours.unknown}); service {quote.credits} for {body}"
        seconds = {body[field]: quote.billable_duration_seconds}
        ours = local_price(entry, body, asset_seconds=seconds)
    theirs = (quote.credits, quote.billable_duration_seconds)
    if (ours.credits, ours.billable_duration_seconds) != theirs:
        mine = (ours.credits, ours.billable_duration_seconds)
        return f"local {mine}, service {theirs} (credits, seconds) for {body}"
    return None


def _file_priced(entry: dict, body: dict) -> str | None:
    """The input file whose length prices ``body``, if it names one."""
    mode = Catalog(entry).mode_for(body) or {}
    sources = mode.get("price", {}).get("duration", [])
    return next((s["asset"] for s in sources if s.get("asset") in body), None)


@pytest.mark.parametrize(("model_id", "mode_id"), MODES, ids=[f"{m}-{d}" for m, d in MODES])
def test_local_price_equals_the_service_estimate(client, entries, model_id, mode_id):
    entry = entries[model_id]
    mode = Catalog(entry).mode(mode_id)

    @settings(
        max_examples=40,
        deadline=None,
        database=None,
        derandomize=True,  # the same requests every run: a failure is always reproducible
        suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
    )
    @given(requests(entry, mode))
    def check(body):
        assume(_valid(entry, body))
        assert disagreement(client, entry, body) is None
        compared.append(body)

    compared: list[dict] = []
    check()
    assert compared, "no valid request drawn"
    for name in priced_fields(mode):  # every priced field that can vary did
        if name in mode["required"] and entry["parameters"][name]["type"] == "asset":
            continue
        seen = {repr(body.get(name, ABSENT)) for body in compared}
        assert len(seen) > 1, f"{name} never varied: {seen}"


def _raised(price: dict) -> dict:
    """The price object with every per-unit price half as much again."""
    out = copy.deepcopy(price)
    if "table" in out:
        out["table"] = {k: v * 1.5 for k, v in out["table"].items()}
    else:
        out["credits"] *= 1.5
    return out


@pytest.mark.parametrize(("model_id", "mode_id"), MODES, ids=[f"{m}-{d}" for m, d in MODES])
def test_a_price_table_changed_on_one_side_only_is_caught(client, entries, model_id, mode_id):
    entry = copy.deepcopy(entries[model_id])
    body = dict(entry["example_request"][mode_id], model=model_id)
    assert disagreement(client, entry, body) is None
    for mode in entry["modes"]:
        if mode["id"] == mode_id:
            mode["price"] = _raised(mode["price"])
    assert disagreement(client, entry, body) is not None

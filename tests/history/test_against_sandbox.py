"""The history against the real sandbox: every figure checked against its credit ledger.

A known history is made with real submits at speed 0: completed, failed (``[[fail:CODE]]``)
and pending (``[[slow:N]]``) generations over several models and two members of one
organization (one with a cap). The ledger (``sandbox.admin.ledger(org_id)``) is the truth.

The few sandbox calls this module needs beyond the fixtures are in the "seams" section below,
so a change of the sandbox's admin helpers is one edit here.
"""

from __future__ import annotations

import time
from collections import defaultdict
from decimal import Decimal
from typing import Any

import pytest

import mediagen
from mediagen import history as h

# -- seams: the sandbox and client calls this module relies on ------------------------------


def _client(sandbox: Any, api_key: str, journal_path: Any) -> Any:
    # estimate=True: every submit is quoted first, so the journal knows each reservation
    return mediagen.Client(
        api_key=api_key, base_url=sandbox.base_url, journal=journal_path, estimate=True
    )


def _second_member(sandbox: Any, tenant: Any, cap: float | None) -> str:
    """A new member of the tenant's organization; returns an API key that bills as them."""
    member = sandbox.admin.create_member(tenant.org_id, cap=cap)
    return sandbox.admin.create_key(member.id).api_key


def _ledger(sandbox: Any, org_id: str) -> list[dict]:
    """Ledger entries: dicts with ``generation_id``, ``kind`` (reserve/charge/refund), amount."""
    return list(sandbox.admin.ledger(org_id)["entries"])


# -- the known history ------------------------------------------------------------------------

PLAN = [
    # (member, endpoint, model, extra prompt marker)
    ("a", "images", "pixel-1", ""),
    ("a", "images", "pixel-1", ""),
    ("a", "images", "pixel-1", "[[fail:safety]]"),
    ("a", "videos", "vidra-2", ""),
    ("a", "videos", "vidra-2", "[[fail:timeout]]"),
    ("a", "audio", "tunesmith", ""),
    ("a", "images", "pixel-1", "[[slow:120]]"),
    ("b", "images", "pixel-1", ""),
    ("b", "videos", "vidra-2", "[[fail:provider_error]]"),
]


def _example(client: Any, model: str) -> dict:
    entry = client.models.get(model)
    example = entry["example_request"] if isinstance(entry, dict) else entry.example_request
    return dict(next(iter(example.values())))


@pytest.fixture(scope="module")
def history(sandbox, tenant_factory, tmp_path_factory):
    tenant = tenant_factory(cap=100_000.0, discount_percent=10.0)
    journal = tmp_path_factory.mktemp("journal") / "journal.jsonl"
    clients = {
        "a": _client(sandbox, tenant.api_key, journal),
        "b": _client(sandbox, _second_member(sandbox, tenant, cap=None), journal),
    }
    made: list[Any] = []
    for member, endpoint, model, marker in PLAN:
        client = clients[member]
        body = _example(client, model)
        body["prompt"] = f"history test {len(made)} {marker}".strip()
        estimate = client.models.estimate(model, **body)
        assert estimate is not None
        made.append(getattr(client, endpoint).create(**body))
    deadline = time.monotonic() + 30
    for gen in made:
        if "slow" in (gen.prompt or ""):
            continue
        client = clients["a"] if gen in made[:7] else clients["b"]
        client.generations.wait(gen, timeout=max(1.0, deadline - time.monotonic()))
    frames = {m: c.generations.to_dataframe() for m, c in clients.items()}
    credits = {m: c.credits.get() for m, c in clients.items()}
    return {
        "tenant": tenant,
        "frames": frames,
        "credits": credits,
        "ledger": _ledger(sandbox, tenant.org_id),
        "both": h.concat_history(list(frames.values())),
    }


def _by_generation(ledger: list[dict], kind: str) -> dict[str, Decimal]:
    out: dict[str, Decimal] = defaultdict(Decimal)
    for entry in ledger:
        if entry["kind"] == kind and entry.get("generation_id"):
            out[entry["generation_id"]] += Decimal(str(abs(entry["amount"])))
    return out


def _per_model(frame, amounts: dict[str, Decimal]) -> dict[str, float]:
    models = dict(zip(frame["id"], frame["model"].astype(str), strict=True))
    out: dict[str, Decimal] = defaultdict(Decimal)
    for generation_id, amount in amounts.items():
        out[models[generation_id]] += amount
    return {model: float(total) for model, total in out.items() if total}


def test_frame_has_every_generation_with_its_status(history):
    both = history["both"]
    assert len(both) == len(PLAN)
    assert both["status"].value_counts().to_dict() == {"completed": 5, "failed": 3, "pending": 1}
    assert set(both["model"].astype(str)) == {"pixel-1", "vidra-2", "tunesmith"}
    assert both["journaled"].all()


def test_spend_by_model_matches_ledger_charges(history):
    both, ledger = history["both"], history["ledger"]
    expected = _per_model(both, _by_generation(ledger, "charge"))
    got = h.spend_by_model(both)["credits"]
    assert {m: v for m, v in got.items() if v} == expected


def test_refunds_by_model_match_ledger_refunds(history):
    both, ledger = history["both"], history["ledger"]
    expected = _per_model(both, _by_generation(ledger, "refund"))
    table = h.failures_by_model(both)
    got = table["refunded_credits"].dropna()
    assert {m: v for m, v in got.items() if v} == expected
    assert table["refund_unknown"].sum() == 0


def test_each_charge_and_estimate_matches(history):
    both, ledger = history["both"], history["ledger"]
    charges = _by_generation(ledger, "charge")
    done = both[both["status"] == "completed"]
    assert {i: float(charges[i]) for i in done["id"]} == dict(
        zip(done["id"], done["credits_charged"], strict=True)
    )
    assert h.estimate_vs_charge(both)["matches"].all()


def test_member_cap_used_is_charges_plus_reservations(history):
    frame, credits = history["frames"]["a"], history["credits"]["a"]
    table = h.cumulative_spend(frame, credits)
    limit = credits.member_limit if hasattr(credits, "member_limit") else credits["member_limit"]
    used = limit.used if hasattr(limit, "used") else limit["used"]
    assert round(table["cumulative"].iloc[-1] + table.attrs["reserved_pending"], 2) == used
    reserved = _by_generation(history["ledger"], "reserve")
    settled = set(_by_generation(history["ledger"], "charge")) | set(
        _by_generation(history["ledger"], "refund")
    )
    outstanding = sum(v for k, v in reserved.items() if k not in settled)
    assert table.attrs["reserved_pending"] == float(outstanding)

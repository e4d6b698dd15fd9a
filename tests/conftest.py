"""Shared fixtures: one real sandbox per test session, and a fresh tenant per test.

- ``sandbox``: a :class:`mediagen_sandbox.testing.SandboxHandle` (``python -m mediagen_sandbox``
  in a subprocess, speed 0, a temporary data dir). ``sandbox.base_url``, ``sandbox.admin``.
- ``tenant``: a new organization + member + API key for this test only (balance 1000, plan
  "pro", no discount, no cap), so tests are isolated and can run in any order.
- ``tenant_factory``: make more tenants with other settings,
  ``tenant_factory(balance=..., plan=..., discount_percent=..., cap=...)``.
- ``catalog_samples``: ``catalog_samples(entry, mode, name, example)``, values of a field worth
  judging, for tests that hold a client-side verdict against ``Catalog.validate``.

Tests that change server-wide settings (rate limits, faults, URL lifetimes) must put them back:
``with sandbox.admin.config_changed(rate_limit_per_second=1): ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from mediagen.pricing.catalog import Catalog
from mediagen_sandbox.testing import running_sandbox


@pytest.fixture(scope="module", autouse=True)
def _no_event_loop_left_running():
    """A test module must not leave an event loop marked running on this thread (Playwright's
    sync API runs one while its browser is open): every later module of the worker would find
    it (``asyncio.run()`` refuses, a widget's blocking wait says "use await") and fail far from
    the cause. The module that leaves it fails here instead, once its own fixtures are done."""
    yield
    import asyncio

    left = asyncio._get_running_loop()
    if left is not None:
        asyncio._set_running_loop(None)
        pytest.fail(f"the module left an event loop running on this thread: {left!r}")


@pytest.fixture(scope="session")
def pki(tmp_path_factory) -> dict[str, Path]:
    """A test CA's files for content credentials (see ``tests/c2pa_test_ca.py``)."""
    from c2pa_test_ca import make_test_ca

    return make_test_ca(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="session")
def sandbox():
    with running_sandbox(speed=0.0) as handle:
        yield handle


@pytest.fixture(scope="session")
def tenant_factory(sandbox):
    def make(balance=1000.0, plan="pro", discount_percent=0.0, cap=None):
        return sandbox.new_tenant(
            balance=balance, plan=plan, discount_percent=discount_percent, cap=cap
        )

    return make


@pytest.fixture
def tenant(tenant_factory):
    return tenant_factory()


def _tiers(mode: Mapping[str, Any]) -> list[Any]:
    tiers: list[Any] = [None]
    for allowed in (mode.get("allowed") or {}).values():
        if isinstance(allowed, dict):
            tiers += [t for t in allowed.get("by_tier") or {} if t not in tiers]
    return tiers


def values_worth_judging(
    entry: Mapping[str, Any], mode: Mapping[str, Any], name: str, example: Mapping[str, Any]
) -> list[Any]:
    """Values of ``name`` in ``mode`` worth judging, from its catalog entry: the example's,
    each kind of wrong shape, every allowed value at every tier and one that is not, the ends
    of its range and one past them, a number off its step, text one character over its length,
    a list one item over its count, every voice and one that does not exist."""
    catalog = Catalog(entry)
    schema = catalog.parameter(name)
    found = [example.get(name), None, "", 12345, "no-such-value", {"a": 1}, [1, 2], "[{"]
    for tier in _tiers(mode):
        found += catalog.allowed(name, mode["id"], tier) or []
    low, high = catalog.range(name, mode["id"])
    found += [b + past for b, past in ((low, 0), (low, -1), (high, 0), (high, 1)) if b is not None]
    step = schema.get("multiple_of")
    if step:
        found += [(low or 0) + step, (low or 0) + step / 2]
    if schema.get("type") in ("integer", "number"):
        found += [True, 7, 0.25]
    if schema.get("max_length"):
        found += ["x" * schema["max_length"], "x" * (schema["max_length"] + 1)]
    limit = (mode.get("max_counts") or {}).get(name)
    if limit is not None:
        item = (example.get(name) or ["asset_example_image"])[0]
        found += [[item] * limit, [item] * (limit + 1)]
    voices = catalog.voices
    return found + [v.get(key) for v in voices for key in ("name", "id")] + ["Zed"] * bool(voices)


@pytest.fixture(scope="session")
def catalog_samples() -> Callable[..., list[Any]]:
    return values_worth_judging


@pytest.fixture(scope="session")
def catalog(sandbox, tenant_factory):
    """The sandbox's catalog by model id, as an enterprise tenant reads it."""
    tenant = tenant_factory(plan="enterprise")
    response = httpx.get(f"{sandbox.base_url}/v1/models", headers=tenant.headers, timeout=30)
    response.raise_for_status()
    return {entry["id"]: entry for entry in response.json()["data"]}

"""Shared fixtures: one real sandbox per test session, and a fresh tenant per test.

- ``sandbox``: a :class:`mediagen_sandbox.testing.SandboxHandle` (``python -m mediagen_sandbox``
  in a subprocess, speed 0, a temporary data dir). ``sandbox.base_url``, ``sandbox.admin``.
- ``tenant``: a new organization + member + API key for this test only (balance 1000, plan
  "pro", no discount, no cap), so tests are isolated and can run in any order.
- ``tenant_factory``: make more tenants with other settings,
  ``tenant_factory(balance=..., plan=..., discount_percent=..., cap=...)``.

Tests that change server-wide settings (rate limits, faults, URL lifetimes) must put them back:
``with sandbox.admin.config_changed(rate_limit_per_second=1): ...``.
"""

from __future__ import annotations

import pytest

from mediagen_sandbox.testing import running_sandbox


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

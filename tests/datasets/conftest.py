"""Fixtures of the table tests (the sandbox and tenants come from ``tests/conftest.py``).

- ``make_client(tenant=..., **options)``: a ``mediagen.Client`` on the sandbox with fast
  polling and a private cache and journal (``tmp_path``); closed after the test.
- ``client``: ``make_client()`` for the test's own tenant.
- ``charges(tenant)``: the ledger's charges of that tenant, per generation id (admin API).
"""

from __future__ import annotations

from collections import Counter

import pytest

import mediagen

FAST_POLL = (0.02, 0.1)


@pytest.fixture
def make_client(sandbox, tenant, tmp_path):
    made = []

    def make(tenant=tenant, **options):
        options.setdefault("poll_interval", FAST_POLL)
        options.setdefault("cache_dir", tmp_path / "cache")
        client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, **options)
        made.append(client)
        return client

    yield make
    for item in made:
        item.close()


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def charges(sandbox):
    """``charges(tenant)``: credits charged per generation id, and how many charges each had."""

    def read(tenant):
        entries = sandbox.admin.ledger(tenant.org_id)["entries"]
        credits: Counter[str] = Counter()
        count: Counter[str] = Counter()
        for entry in entries:
            if entry["kind"] == "charge":
                credits[entry["generation_id"]] += entry["amount"]
                count[entry["generation_id"]] += 1
        return credits, count

    return read

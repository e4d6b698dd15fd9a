"""Fixtures of the content-credential tests.

- ``pki`` (``tests/conftest.py``): the test CA's files (``tests/c2pa_test_ca.py``).
- ``signed_by``: ``with signed_by(chain, key): ...`` configures the signer for the block.
- ``client``: a ``mediagen.Client`` on the sandbox with a private cache; ``catalog``: the models.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

import mediagen
from mediagen import provenance


@pytest.fixture
def signed_by():
    @contextlib.contextmanager
    def configured(chain: Path, key: Path):
        provenance.configure(certificate_chain=chain, key=key)
        try:
            yield
        finally:
            provenance.configure()

    return configured


@pytest.fixture(autouse=True)
def _no_signer_from_the_environment(monkeypatch):
    monkeypatch.delenv(provenance._signing.CERT_ENV, raising=False)
    monkeypatch.delenv(provenance._signing.KEY_ENV, raising=False)
    provenance.configure()


@pytest.fixture
def client(sandbox, tenant, tmp_path):
    with mediagen.Client(
        api_key=tenant.api_key,
        base_url=sandbox.base_url,
        poll_interval=(0.02, 0.1),
        cache_dir=tmp_path / "cache",
    ) as made:
        yield made

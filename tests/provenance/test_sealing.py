"""How a save is sealed: a signed download reaches its name signed and whole, a signer is made
once per configuration and again when its files change, and a save that cannot be written
leaves nothing behind."""

from __future__ import annotations

import os

import pytest
from provenance_helpers import example

import mediagen as mg
from mediagen import provenance
from mediagen.provenance import _seal
from mediagen.provenance._sidecar import read_sidecar


def _done(client, catalog):
    generation = client.images.create(**example(catalog, "pixel-1"))
    return client.generations.wait(generation, timeout=60)


def _leftovers(folder):
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_a_signed_download_reaches_the_cache_signed_with_no_temporary_file_left(
    client, catalog, pki, signed_by, tmp_path
):
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        done = _done(client, catalog)
        saved = done.outputs[0].save(tmp_path / "out")
    cached = done.outputs[0].local_path
    for path in (cached, saved):
        assert mg.verify(path, trust_anchors=pki["root.pem"]).status == "valid"
        assert read_sidecar(path)["signed"] is True
        assert _leftovers(path.parent) == []


def test_a_signer_is_made_once_per_configuration_and_again_when_its_key_changes(pki):
    provenance.configure(certificate_chain=pki["chain.pem"], key=pki["leaf.key"])
    first = provenance.current_signer()
    provenance.configure(certificate_chain=pki["chain.pem"], key=pki["leaf.key"])
    assert provenance.current_signer() is first
    stat = pki["leaf.key"].stat()
    os.utime(pki["leaf.key"], ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert provenance.current_signer() is not first


def test_a_signed_download_that_cannot_be_written_fails_and_leaves_nothing(
    client, catalog, pki, signed_by, tmp_path, monkeypatch
):
    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_seal, "_overwrite", full)
    with signed_by(pki["chain.pem"], pki["leaf.key"]), pytest.raises(OSError):
        _done(client, catalog)  # waiting downloads the output into the cache
    assert list(client._cache.outputs.iterdir()) == []

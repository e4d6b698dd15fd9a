"""How a save is sealed: a signed download reaches its name signed and whole, a signer is made
once per configuration and again when its files change, and a save that cannot be written
leaves nothing behind."""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest
from provenance_helpers import example

import mediagen as mg
from mediagen import provenance
from mediagen.provenance import _seal, _signing
from mediagen.provenance._sidecar import read_sidecar, sidecar_of


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


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_threads_saving_one_output_at_once_each_get_it_sealed(
    client, catalog, pki, signed_by, tmp_path, signed
):
    """Two studios of one kernel load the same history into one cache at once: each thread
    that finds an output missing downloads and seals it, and every one of them must succeed
    (their temporary files beside the same name must not be one file)."""
    output = _done(client, catalog).outputs[0]
    cached = output.local_path
    threads = 6
    start = threading.Barrier(threads)

    def save(n: int):
        start.wait()
        return output.save(tmp_path / f"out-{n}")

    with signed_by(pki["chain.pem"], pki["leaf.key"]) if signed else contextlib.nullcontext():
        for _ in range(5):  # each round finds the cache empty and races for it
            cached.unlink()
            sidecar_of(cached).unlink()
            with ThreadPoolExecutor(threads) as pool:
                saved = list(pool.map(save, range(threads)))
            for path in (cached, *saved):
                assert read_sidecar(path)["signed"] is signed
                assert _leftovers(path.parent) == []
    if signed:
        assert mg.verify(cached, trust_anchors=pki["root.pem"]).status == "valid"


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


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_signs_with_a_signer_and_context_of_its_own(pki, tmp_path):
    """A process pool forked after the parent signed (a table run's workers) signs too."""
    provenance.configure(certificate_chain=pki["chain.pem"], key=pki["leaf.key"])
    parents = (provenance.current_signer(), _signing.signing_context())
    image = tmp_path / "pixel.png"
    image.write_bytes(_png())
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when it signed with objects of its own
        code = 1
        try:
            ours = (provenance.current_signer(), _signing.signing_context())
            provenance.seal(image, {"generation_id": "g"}, "image/png")
            fresh = ours[0] is not parents[0] and ours[1] is not parents[1]
            if fresh and read_sidecar(image)["signed"]:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert mg.verify(image, trust_anchors=pki["root.pem"]).status == "valid"


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\0\0\0\0")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )

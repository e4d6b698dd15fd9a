"""Every saved output carries content credentials: signed and embedded with a signer, a
sidecar always; read back by c2pa itself, by ``mediagen.verify`` and by ``mediagen verify``."""

from __future__ import annotations

import asyncio
import json
import logging
import struct
import subprocess
import sys

import c2pa
import pytest
from provenance_helpers import example

import mediagen as mg
from mediagen import provenance
from mediagen.provenance import ASSERTION_LABEL
from mediagen.provenance._record import file_sha256
from mediagen.provenance._sidecar import sidecar_of

KINDS = {
    "image": ("pixel-1", None, "images"),
    "video": ("vidra-2", "text_to_video", "videos"),
    "speech": ("voxa-tts", None, "audio"),
    "music": ("tunesmith", None, "audio"),
}
TRAINED = "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"


def _generate(client, catalog, kind):
    model, mode, resource = KINDS[kind]
    generation = getattr(client, resource).create(**example(catalog, model, mode))
    done = client.generations.wait(generation, timeout=120)
    assert done.status == "completed", done.error
    return done


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "mediagen.cli", "verify", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_media_type_is_signed_and_reads_back_trusted(
    client, catalog, pki, signed_by, tmp_path, kind
):
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        done = _generate(client, catalog, kind)
        saved = done.outputs[0].save(tmp_path / "out")
    context = c2pa.Context.from_dict(
        {"verify": {"verify_trust": True}, "trust": {"trust_anchors": pki["root.pem"].read_text()}}
    )
    mime = done.outputs[0].content_type.split(";")[0]
    with open(saved, "rb") as stream, c2pa.Reader(mime, stream, context=context) as reader:
        assert reader.get_validation_state() == "Trusted"
        manifest = reader.get_active_manifest()
    labels = {a["label"]: a["data"] for a in manifest["assertions"]}
    actions = next(v for k, v in labels.items() if k.startswith("c2pa.actions"))["actions"]
    assert actions[0]["action"] == "c2pa.created"
    assert actions[0]["digitalSourceType"] == TRAINED
    assert manifest["claim_generator_info"][0]["name"] == "mediagen"
    assert manifest["claim_generator_info"][0]["version"] == mg.__version__
    record = labels[ASSERTION_LABEL]
    assert record["generation_id"] == done.id
    assert record["model"] == done.model
    assert record["credits_charged"] == done.credits_charged
    assert record["mediagen_version"] == mg.__version__
    assert record["created_at"]
    assert record["completed_at"]

    verdict = mg.verify(saved, trust_anchors=pki["root.pem"])
    assert verdict.status == "valid", verdict
    assert verdict.generation_id == done.id
    assert verdict.signer

    run = _cli("--trust-anchors", pki["root.pem"], saved)
    assert run.returncode == 0, run.stderr
    line = run.stdout.strip()
    assert line.endswith(" valid"), line
    assert done.id in line
    assert done.model in line
    assert f"credits={done.credits_charged:g}" in line


def _flip_in_payload(data: bytearray, chunk: bytes | None) -> None:
    """One byte flipped halfway into the media payload after ``chunk`` (PNG IDAT, MP4 mdat),
    or in the last frame of an MP3 (``None``: its manifest is in the ID3 tag up front), so
    the manifest itself is intact and only the hash binding can notice."""
    if chunk is None:
        data[len(data) - 100] ^= 0xFF
        return
    at = data.rfind(chunk) if chunk == b"IDAT" else data.find(chunk)
    assert at > 0, chunk
    length = struct.unpack(">I", data[at - 4 : at])[0]
    data[at + length // 2] ^= 0xFF


@pytest.mark.parametrize(
    ("kind", "chunk", "code"),
    [
        ("image", b"IDAT", "assertion.dataHash.mismatch"),
        ("speech", None, "assertion.dataHash.mismatch"),
        ("video", b"mdat", "assertion.bmffHash.mismatch"),
    ],
)
def test_one_flipped_byte_reads_tampered_with_c2pa_code(
    client, catalog, pki, signed_by, tmp_path, kind, chunk, code
):
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        saved = _generate(client, catalog, kind).outputs[0].save(tmp_path)
    data = bytearray(saved.read_bytes())
    _flip_in_payload(data, chunk)
    saved.write_bytes(bytes(data))
    run = _cli("--trust-anchors", pki["root.pem"], saved)
    assert run.returncode == 1
    assert f"tampered ({code})" in run.stdout, run.stdout


def test_verify_without_the_provenance_extra_names_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "c2pa", None)
    (tmp_path / "a.png").write_bytes(b"\x89PNG")
    with pytest.raises(mg.MissingExtraError, match=r'pip install "mediagen\[provenance\]"'):
        mg.verify(tmp_path / "a.png")


def test_a_self_signed_certificate_signs_but_reads_untrusted(
    client, catalog, pki, signed_by, tmp_path
):
    with signed_by(pki["self_chain.pem"], pki["self.key"]):
        saved = _generate(client, catalog, "image").outputs[0].save(tmp_path)
    run = _cli("--trust-anchors", pki["root.pem"], saved)
    assert run.returncode == 1
    assert run.stdout.strip().endswith("untrusted signer"), run.stdout
    assert "signed_by=self-made signer" in run.stdout


def test_a_file_without_credentials_says_so(tmp_path):
    from PIL import Image

    bare = tmp_path / "photo.png"
    Image.new("RGB", (16, 16), (200, 30, 30)).save(bare)
    run = _cli(bare, tmp_path / "gone.png")
    assert run.returncode == 1
    assert run.stdout.splitlines() == [
        f"{bare}: no manifest",
        f"{tmp_path / 'gone.png'}: no such file",
    ]
    assert mg.verify(bare).status == "no manifest"
    garbled = tmp_path / "garbled.png"
    garbled.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    assert (mg.verify(garbled).status, mg.verify(garbled).code) == (
        "no manifest",
        "unreadable: Other",
    )


def test_without_a_signer_the_file_is_untouched_and_its_sidecar_unsigned(client, catalog, tmp_path):
    done = _generate(client, catalog, "image")
    cached = done.outputs[0].local_path
    saved = done.outputs[0].save(tmp_path)
    assert saved.read_bytes() == cached.read_bytes()
    sidecar = json.loads(sidecar_of(saved).read_text())
    assert sidecar["signed"] is False
    assert sidecar["unsigned_reason"] == "no signer configured"
    assert sidecar[ASSERTION_LABEL]["output_sha256"] == file_sha256(saved)
    assert sidecar[ASSERTION_LABEL]["generation_id"] == done.id
    with pytest.raises(c2pa.C2paError.ManifestNotFound):
        c2pa.Reader(str(saved))
    assert mg.verify(saved).status == "unsigned"
    saved.write_bytes(saved.read_bytes() + b"\0")
    verdict = mg.verify(saved)
    assert (verdict.status, verdict.code) == ("tampered", "mediagen.sidecar.hashMismatch")


def test_no_secret_reaches_a_manifest_a_sidecar_a_log_or_the_output(
    client, catalog, pki, signed_by, tenant, tmp_path, caplog, capsys
):
    caplog.set_level(logging.DEBUG)
    key_pem = pki["leaf.key"].read_text()
    key_body = "".join(key_pem.splitlines()[1:-1])
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        saved = _generate(client, catalog, "image").outputs[0].save(tmp_path)
    run = _cli("--trust-anchors", pki["root.pem"], saved)
    with c2pa.Reader(str(saved)) as reader:
        store = reader.json()
    seen = [
        store,
        sidecar_of(saved).read_text(),
        run.stdout,
        run.stderr,
        caplog.text,
        "".join(capsys.readouterr()),
        repr(mg.verify(saved)),
        saved.read_bytes().decode("latin-1"),
    ]
    for text in seen:
        assert tenant.api_key not in text
        assert key_body[:40] not in text
        assert key_body[-40:] not in text


def test_the_async_client_signs_off_its_event_loop(
    sandbox, tenant, catalog, pki, signed_by, tmp_path, monkeypatch
):
    import threading

    from mediagen.provenance import _seal

    threads = []
    embed = _seal.embed

    def watched(*args):
        threads.append(threading.current_thread())
        return embed(*args)

    monkeypatch.setattr(_seal, "embed", watched)

    async def run():
        async with mg.AsyncClient(
            api_key=tenant.api_key, base_url=sandbox.base_url, cache_dir=tmp_path / "cache"
        ) as client:
            generation = await client.images.create(**example(catalog, "pixel-1"))
            done = await client.generations.wait(generation, timeout=60)
            return await done.outputs[0].save(tmp_path)

    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        saved = asyncio.run(run())
    assert threads
    assert all(t is not threading.main_thread() for t in threads)
    assert mg.verify(saved, trust_anchors=pki["root.pem"]).status == "valid"


def test_a_copy_of_an_output_cached_unsigned_is_signed_once_a_signer_is_set(
    client, catalog, pki, signed_by, tmp_path
):
    done = _generate(client, catalog, "image")
    assert mg.verify(done.outputs[0].local_path).status == "unsigned"
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        saved = done.outputs[0].save(tmp_path)
    assert mg.verify(saved, trust_anchors=pki["root.pem"]).status == "valid"
    assert json.loads(sidecar_of(saved).read_text())["signed"] is True


def test_a_callback_signs_for_a_key_that_stays_in_its_vault(client, catalog, pki, tmp_path):
    """A KMS or HSM never hands its key over: mediagen passes the bytes, the callback signs."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    vault = serialization.load_pem_private_key(pki["leaf.key"].read_bytes(), None)
    asked = []

    def kms_sign(data: bytes) -> bytes:
        asked.append(len(data))
        return vault.sign(data, ec.ECDSA(hashes.SHA256()))

    provenance.configure(certificate_chain=pki["chain.pem"], sign=kms_sign)
    try:
        saved = _generate(client, catalog, "image").outputs[0].save(tmp_path)
    finally:
        provenance.configure()
    assert asked
    assert mg.verify(saved, trust_anchors=pki["root.pem"]).status == "valid"
    record = json.loads(sidecar_of(saved).read_text())[ASSERTION_LABEL]
    assert record["request"]["prompt"]
    assert "api_key" not in json.dumps(record)


def test_the_manifest_holds_the_request_as_sent_and_its_estimate(client, catalog, tmp_path):
    request = example(catalog, "pixel-1")
    quote = client.models.estimate_request(request)
    generation = client.images.create(**request, estimate=True)
    done = client.generations.wait(generation, timeout=60)
    record = json.loads(sidecar_of(done.outputs[0].save(tmp_path)).read_text())[ASSERTION_LABEL]
    sent = {k: v for k, v in request.items() if k not in ("model", "mode")}
    assert record["request"] == sent
    assert record["estimate"]["credits_after_discount"] == quote.credits_after_discount
    assert record["credits_charged"] == done.credits_charged

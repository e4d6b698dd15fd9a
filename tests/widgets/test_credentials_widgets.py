"""What the studio's job card and gallery say of an output's content credentials: read back
from the file saved in the cache (signed with the test CA, or only recorded beside it), with
trait changes standing in for clicks."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_jobs_sandbox import studio_on
from widget_loop import run, until

from mediagen import provenance
from mediagen.provenance._signing import CERT_ENV, KEY_ENV
from mediagen.provenance._verify import TRUST_ENV
from mediagen.widgets._loop_client import aclose


@pytest.fixture(autouse=True)
def _signer_only_as_each_test_sets_it(monkeypatch):
    for name in (CERT_ENV, KEY_ENV, TRUST_ENV):
        monkeypatch.delenv(name, raising=False)
    provenance.configure()
    yield
    provenance.configure()


def _made_in_studio(client, prompt: str):
    async def scenario():
        studio = await studio_on(client, "pixel-1", prompt=prompt)
        studio.estimate.click = "click"
        await until(lambda: studio.cards and studio.cards[0].items, what="the output")
        await until(lambda: studio.gallery.entries, what="the gallery card")
        await aclose(client)
        return studio.cards[0], studio.gallery.entries[0]

    return run(scenario())


def test_a_signed_output_says_who_signed_it_and_which_model_made_it(
    make_client, tenant, pki, monkeypatch
):
    provenance.configure(certificate_chain=pki["chain.pem"], key=pki["leaf.key"])
    monkeypatch.setenv(TRUST_ENV, str(pki["root.pem"]))  # the team's CA
    card, entry = _made_in_studio(make_client(tenant), "a signed lighthouse")
    expected = {
        "status": "valid",
        "model": "pixel-1",
        "signer": "mediagen test signer",
        "code": None,
    }
    assert card.items[0]["credentials"] == expected
    assert entry["credentials"] == expected


def test_a_signer_no_trust_anchor_vouches_for_reads_as_untrusted(make_client, tenant, pki):
    provenance.configure(certificate_chain=pki["self_chain.pem"], key=pki["self.key"])
    card, entry = _made_in_studio(make_client(tenant), "a self-signed lighthouse")
    said = card.items[0]["credentials"]
    assert (said["status"], said["signer"]) == ("untrusted signer", "self-made signer")
    assert entry["credentials"]["status"] == "untrusted signer"


def test_without_a_signer_the_card_says_the_record_is_unsigned(make_client, tenant):
    card, entry = _made_in_studio(make_client(tenant), "an unsigned lighthouse")
    said = card.items[0]["credentials"]
    assert said == {"status": "unsigned", "model": "pixel-1", "signer": None, "code": None}
    assert entry["credentials"] == said


def test_a_saved_output_changed_afterwards_reads_as_tampered_and_a_bare_file_says_nothing(
    make_client, tenant, pki, tmp_path
):
    """What a card says is the file's state when read: a flipped byte is reported with C2PA's
    code; a file with no record at all gets no line."""
    provenance.configure(certificate_chain=pki["chain.pem"], key=pki["leaf.key"])
    card, _ = _made_in_studio(make_client(tenant), "a lighthouse to tamper with")
    path = Path(card.outputs[0].local_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    said = provenance.summary(path)
    assert said is not None
    assert said["status"] == "tampered"
    assert said["code"] == "assertion.dataHash.mismatch"

    from PIL import Image

    bare = tmp_path / "bare.png"
    Image.new("RGB", (8, 8), "navy").save(bare)
    assert provenance.summary(bare) is None

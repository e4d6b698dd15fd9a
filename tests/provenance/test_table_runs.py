"""A table run's outputs carry their credentials: a column of ``results.parquet`` says each
row's, and ``run-manifest.json`` lists every row's outputs, manifest hashes and charge."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

import fsspec
import pandas as pd
import pyarrow.parquet as pq

import mediagen as mg
from mediagen.cli import main
from mediagen.datasets import plan
from mediagen.provenance._sidecar import sidecar_of


def _run(client, output_dir):
    df = pd.DataFrame({"caption": ["a kite", "a boat"]}, index=["k", "b"])
    made = plan(df, client, model="pixel-1", prompt="{caption}", run_id=f"run-{uuid.uuid4()}")
    return made, made.run(output_dir=output_dir, progress=False)


def test_each_row_says_its_credentials_and_the_run_manifest_lists_them(
    client, pki, signed_by, tmp_path
):
    out_dir = tmp_path / "renders"
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        made, out = _run(client, out_dir)
    assert list(out["credentials"]) == ["signed", "signed"]
    assert list(pq.read_table(out_dir / "results.parquet").column("credentials").to_pylist()) == [
        "signed",
        "signed",
    ]
    for place in out["output"]:
        assert mg.verify(place, trust_anchors=pki["root.pem"]).status == "valid"

    manifest = json.loads((out_dir / "run-manifest.json").read_text())
    assert manifest["run_id"] == made.run_id
    assert manifest["credits_charged"] == out["credits"].sum()
    by_row = {entry["row"]: entry for entry in manifest["rows"]}
    assert set(by_row) == {"k", "b"}
    for label, row in out.iterrows():
        entry = by_row[label]
        assert entry["generation_id"] == row["generation_id"]
        assert entry["credits_charged"] == row["credits"]
        [saved] = entry["outputs"]
        assert saved["output"] == row["output"]
        sidecar = sidecar_of(Path(row["output"])).read_bytes()
        assert saved["manifest_sha256"] == hashlib.sha256(sidecar).hexdigest()


def test_without_a_signer_rows_say_unsigned_and_a_remote_folder_gets_the_sidecars(client):
    root = f"memory://creds-{uuid.uuid4().hex}"
    _, out = _run(client, root)
    assert list(out["credentials"]) == ["unsigned", "unsigned"]
    fs = fsspec.filesystem("memory")
    manifest = json.loads(fs.cat(root + "/run-manifest.json"))
    for entry in manifest["rows"]:
        [saved] = entry["outputs"]
        sidecar = fs.cat(saved["output"] + ".mediagen.json")
        assert json.loads(sidecar)["signed"] is False
        assert saved["manifest_sha256"] == hashlib.sha256(sidecar).hexdigest()


def test_a_saved_compare_grid_says_each_cells_credentials_and_writes_its_run_manifest(
    client, pki, signed_by, tmp_path
):
    """``grid.save("kites.parquet")`` writes ``kites.run-manifest.json`` beside it: every
    cell's outputs (the client's cached copies), the hash of each one's sidecar, its charge."""
    path = tmp_path / "grids" / "kites.parquet"
    with signed_by(pki["chain.pem"], pki["leaf.key"]):
        grid = mg.compare(["a kite", "a boat"], ["pixel-1", "voxa-tts"], client, run=True)
        grid.join(60)
    grid.save(path)
    saved = pd.read_parquet(path)
    assert list(saved["credentials"]) == ["signed"] * 4
    for cell in grid.cells:  # what the cells show: each output read back, valid for the team
        [item] = cell["items"]
        assert item["credentials"]["status"] == "untrusted signer"  # no anchors given here
        assert item["credentials"]["signer"] == "mediagen test signer"

    manifest = json.loads((path.parent / "kites.run-manifest.json").read_text())
    results = grid.results
    assert manifest["credits_charged"] == results["credits"].sum()
    assert {entry["row"] for entry in manifest["rows"]} == {"0,0", "0,1", "1,0", "1,1"}
    assert sorted(e["generation_id"] for e in manifest["rows"]) == sorted(results["generation_id"])
    for entry in manifest["rows"]:
        [output] = entry["outputs"]
        assert output["credentials"] == "signed"
        assert mg.verify(output["output"], trust_anchors=pki["root.pem"]).status == "valid"
        sidecar = sidecar_of(Path(output["output"])).read_bytes()
        assert output["manifest_sha256"] == hashlib.sha256(sidecar).hexdigest()


def test_mediagen_verify_audits_a_run_manifest_against_its_folder(client, tmp_path, capsys):
    """``mediagen verify renders/run-manifest.json``: ``complete`` while the folder holds
    what the run wrote; an output dropped, one whose sidecar was swapped and one added are each
    named, and the exit status is 1."""
    out_dir = tmp_path / "renders"
    _, out = _run(client, out_dir)
    manifest = out_dir / "run-manifest.json"
    assert main(["verify", str(manifest)]) == 0
    assert (
        capsys.readouterr().out
        == f"{manifest}: 2 rows, 2 outputs, {out['credits'].sum():g} credits, complete\n"
    )

    kite, boat = (Path(place) for place in out["output"])
    sidecar_of(kite).write_bytes(sidecar_of(boat).read_bytes())  # swapped
    sidecar_of(boat).unlink()  # dropped
    extra = out_dir / "extra.png"
    extra.write_bytes(b"png")
    sidecar_of(extra).write_text("{}")  # added
    assert main(["verify", str(manifest)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{manifest}: {kite}: its sidecar is not the one the run recorded",
        f"{manifest}: {boat}: listed for row b, its sidecar is gone",
        f"{manifest}: {extra}: in the folder, not in the run manifest",
    ]

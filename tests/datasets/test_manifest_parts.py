"""The parts of a cluster run's manifest, gathered into one ``run-manifest.json``: each row
once (its newest part's entry), the parts in their places' order, one run at a time."""

from __future__ import annotations

import hashlib
import json
import time

import pandas as pd
import pytest

from mediagen.datasets import write_run_manifest
from mediagen.datasets._manifest_parts import PARTS, read_parts, write_part


def _results(tmp_path, labels, gid="g", credits=1.0):
    """Result lines of ``labels``, each with an output and its sidecar in ``tmp_path``."""
    outputs = []
    for label in labels:
        output = tmp_path / f"{label}.png"
        output.write_bytes(b"png " + str(label).encode())
        output.with_name(output.name + ".mediagen.json").write_text(json.dumps({"row": label}))
        outputs.append(str(output))
    return pd.DataFrame(
        {
            "generation_id": [f"{gid}-{label}" for label in labels],
            "status": "completed",
            "credits": credits,
            "output": outputs,
            "credentials": "unsigned",
        },
        index=pd.Index(labels),
    )


def _manifest(tmp_path, run_id=None):
    return json.loads(open(write_run_manifest(tmp_path, run_id=run_id)).read())


def test_the_parts_gather_in_their_places_order_with_each_sidecars_hash(tmp_path):
    write_part(str(tmp_path), _results(tmp_path, ["c", "d"]), "run-1", "000001")
    write_part(str(tmp_path), _results(tmp_path, ["a", "b"]), "run-1", "000000")
    manifest = _manifest(tmp_path)
    assert manifest["run_id"] == "run-1"
    assert [entry["row"] for entry in manifest["rows"]] == ["a", "b", "c", "d"]
    assert manifest["credits_charged"] == 4.0
    [saved] = manifest["rows"][0]["outputs"]
    sidecar = (tmp_path / "a.png.mediagen.json").read_bytes()
    assert saved["manifest_sha256"] == hashlib.sha256(sidecar).hexdigest()
    assert set(manifest) == {"run_id", "mediagen_version", "credits_charged", "rows"}


def test_a_partition_run_again_replaces_its_part_and_a_row_is_listed_once(tmp_path):
    write_part(str(tmp_path), _results(tmp_path, ["a", "b"]), "run-1", "000000")
    write_part(str(tmp_path), _results(tmp_path, ["a", "b"], gid="again"), "run-1", "000000")
    assert len(read_parts(str(tmp_path))) == 1  # the same rows: the same part
    time.sleep(0.01)
    write_part(str(tmp_path), _results(tmp_path, ["b", "c"], gid="new"), "run-1", "000000")
    assert len(list((tmp_path / PARTS).iterdir())) == 2  # no temporary file left behind
    manifest = _manifest(tmp_path)
    assert [(e["row"], e["generation_id"]) for e in manifest["rows"]] == [
        ("a", "again-a"),
        ("b", "new-b"),  # its newest part's entry, once
        ("c", "new-c"),
    ]
    assert manifest["credits_charged"] == 3.0


def test_runs_sharing_a_folder_are_gathered_one_at_a_time(tmp_path):
    write_part(str(tmp_path), _results(tmp_path, ["a"]), "run-1", "000000")
    time.sleep(0.01)
    write_part(str(tmp_path), _results(tmp_path, ["a", "b"], gid="two"), "run/2", "000000")
    assert [e["row"] for e in _manifest(tmp_path)["rows"]] == ["a", "b"]  # the newest run
    assert _manifest(tmp_path)["run_id"] == "run/2"
    assert [e["generation_id"] for e in _manifest(tmp_path, "run-1")["rows"]] == ["g-a"]
    with pytest.raises(FileNotFoundError, match="run-3"):
        write_run_manifest(tmp_path, run_id="run-3")


def test_without_parts_it_says_what_to_do_first(tmp_path):
    with pytest.raises(FileNotFoundError, match="output_dir="):
        write_run_manifest(tmp_path)
    assert not (tmp_path / "run-manifest.json").exists()

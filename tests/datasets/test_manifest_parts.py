"""The parts of a cluster run's manifest, gathered into one ``run-manifest.json``: each row
once (its newest part's entry), the parts in their places' order, one run at a time."""

from __future__ import annotations

import hashlib
import json
import time

import pandas as pd
import pytest

from mediagen.datasets import write_run_manifest
from mediagen.datasets._audit import check_run_manifest
from mediagen.datasets._manifest_parts import PARTS, read_parts, write_part, write_plan


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


def test_rows_the_driver_planned_that_no_partition_ran_are_named_and_fail_the_audit(tmp_path):
    write_plan(str(tmp_path), "run-1", 4, ["a", "b", "c", "d"])
    write_part(str(tmp_path), _results(tmp_path, ["a", "b"]), "run-1", "000000")
    manifest = _manifest(tmp_path)
    assert manifest["rows_planned"] == 4
    assert manifest["rows_missing"] == ["c", "d"]
    assert check_run_manifest(tmp_path / "run-manifest.json") == [
        "2 of 4 planned rows never ran (c, d): compute the whole result, then gather the "
        "manifest again"
    ]
    write_part(str(tmp_path), _results(tmp_path, ["c", "d"]), "run-1", "000001")
    manifest = _manifest(tmp_path)
    assert manifest["rows_missing"] == []
    assert check_run_manifest(tmp_path / "run-manifest.json") == []


def test_without_the_labels_the_plan_counts_the_rows_that_never_ran(tmp_path):
    write_plan(str(tmp_path), "run-1", 3, None)  # Spark without index=: labels made on executors
    write_part(str(tmp_path), _results(tmp_path, [7, 8]), "run-1", "000000")
    manifest = _manifest(tmp_path)
    assert manifest["rows_planned"] == 3
    assert "rows_missing" not in manifest
    [problem] = check_run_manifest(tmp_path / "run-manifest.json")
    assert problem.startswith("1 of 3 planned rows never ran")


def test_a_plan_alone_is_no_part_and_a_newer_plan_does_not_hide_the_run_that_ran(tmp_path):
    write_plan(str(tmp_path), "run-1", 2, ["a", "b"])
    with pytest.raises(FileNotFoundError, match="output_dir="):
        write_run_manifest(tmp_path)  # planned, never computed
    write_part(str(tmp_path), _results(tmp_path, ["a", "b"]), "run-1", "000000")
    time.sleep(0.01)
    write_plan(str(tmp_path), "run-2", 2, ["x", "y"])  # planned later, not computed yet
    manifest = _manifest(tmp_path)
    assert manifest["run_id"] == "run-1"
    assert manifest["rows_missing"] == []

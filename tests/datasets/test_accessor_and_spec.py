"""``df.mediagen`` without ``import mediagen`` loading pandas; the picklable plan spec; fields
taken as they are; an fsspec output directory."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import fsspec
import pandas as pd
import pyarrow.parquet as pq

import mediagen as mg
from mediagen.datasets import PlanSpec, plan, row_key


def _fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_the_accessor_comes_with_pandas_imported_after_mediagen():
    out = _fresh(
        "import json, sys, mediagen\n"
        "before = 'pandas' in sys.modules\n"
        "c = mediagen.col('line')\n"
        "import pandas as pd\n"
        "acc = pd.DataFrame({'a': [1]}).mediagen\n"
        "print(json.dumps([before, type(acc).__name__, repr(c)]))"
    )
    assert json.loads(out) == [False, "MediagenAccessor", "mediagen.col('line')"]


def test_the_accessor_comes_with_pandas_imported_before_mediagen():
    out = _fresh(
        "import pandas as pd, mediagen\nprint(type(pd.DataFrame({'a': [1]}).mediagen).__name__)"
    )
    assert out == "MediagenAccessor"


def test_the_spec_pickles_and_builds_the_same_rows_and_keys_elsewhere():
    spec = PlanSpec({"model": "voxa-tts", "text": mg.col("line"), "voice_name": "{voice}"})
    df = pd.DataFrame({"line": ["hello", None], "voice": ["ava", "ben"]}, index=["x", "y"])
    again = pickle.loads(pickle.dumps(spec))  # noqa: S301  (our own bytes, as a worker gets them)
    assert again == spec
    rows = again.rows(df, "r1")
    assert rows.loc["x", "request"] == {"model": "voxa-tts", "text": "hello", "voice_name": "ava"}
    assert rows.loc["y", "request"] == {"model": "voxa-tts", "voice_name": "ben"}  # empty: left out
    assert rows.loc["x", "key"] == row_key("r1", "x", rows.loc["x", "request"])
    assert "api" not in pickle.dumps(spec).decode("latin-1").lower()


def test_col_passes_lists_and_numbers_as_they_are(client):
    df = pd.DataFrame({"caption": ["a", "b"], "n": [1, 2]})
    made = plan(df, client, model="pixel-1", prompt="{caption}", generate_image_count=mg.col("n"))
    assert [r["generate_image_count"] for r in made.requests["request"]] == [1, 2]
    assert all(type(r["generate_image_count"]) is int for r in made.requests["request"])


def test_outputs_and_results_go_to_an_fsspec_url(client, tenant):
    df = pd.DataFrame({"caption": ["a kite", "a boat"]})
    out = df.mediagen.generate(
        client, model="pixel-1", prompt="{caption}", output_dir="memory://renders"
    )
    fs = fsspec.filesystem("memory")
    assert all(o.startswith("memory://renders/") for o in out["output"])
    assert all(fs.cat(o)[:4] == b"\x89PNG" for o in out["output"])
    with fs.open("/renders/results.parquet", "rb") as handle:
        stored = pq.read_table(handle).to_pandas()
    assert list(stored["generation_id"]) == list(out["generation_id"])
    assert tenant.api_key not in fs.cat("/renders/results.parquet").decode("latin-1")

"""What a plan holds per row is what it needs: the checks of distinct rows are remembered a
few at a time, the keys are made in slices, and a run under another run id makes each block's
keys as the block starts. None of it changes a verdict, a key or a charge (the real sandbox)."""

from __future__ import annotations

import pandas as pd
import pytest

import mediagen as mg
from mediagen.datasets import PlanError, _plan, plan, row_key
from mediagen.datasets._keys import row_keys


def test_every_invalid_row_is_named_when_the_checks_are_forgotten_between_rows(client, monkeypatch):
    monkeypatch.setattr(_plan, "VERDICTS", 2)
    counts = [1, 9, 2, 1, 9, 3, 9]  # 9 images is over the model's limit
    df = pd.DataFrame({"caption": [f"a cup, take {i}" for i in range(7)], "n": counts})
    with pytest.raises(PlanError) as raised:
        plan(df, client, model="pixel-1", prompt="{caption}", generate_image_count=mg.col("n"))
    assert sorted({row for row, _, _ in raised.value.problems}) == [1, 4, 6]
    made = plan(
        df, client, on_invalid="skip", model="pixel-1", prompt="{caption}",
        generate_image_count=mg.col("n"),
    )  # fmt: skip
    assert list(made.requests["valid"]) == [n != 9 for n in counts]
    assert made.requests["problem"].isna().tolist() == [n != 9 for n in counts]


def test_keys_made_in_slices_are_the_keys_of_every_row(client, monkeypatch):
    df = pd.DataFrame({"caption": [f"a lamp, take {i}" for i in range(7)]}, index=list("abcdefg"))
    whole = plan(df, client, model="pixel-1", prompt="{caption}", run_id="slices")
    monkeypatch.setattr(_plan, "KEYS_AT_ONCE", 3)
    sliced = plan(df, client, model="pixel-1", prompt="{caption}", run_id="slices")
    expected = row_keys("slices", df.index, whole.requests["request"])
    assert list(sliced.requests["key"]) == list(whole.requests["key"]) == expected
    assert sliced.requests["key"].dtype == whole.requests["key"].dtype
    assert list(sliced.requests.columns) == ["request", "key", "estimate"]
    assert list(sliced.requests.index) == list("abcdefg")


def test_a_run_under_another_run_id_sends_each_row_with_that_ids_key(
    client, tenant, charges, monkeypatch, tmp_path
):
    monkeypatch.setattr(_plan, "BLOCK", 2)
    df = pd.DataFrame({"caption": [f"a chair, take {i}" for i in range(5)]}, index=[5, 4, 3, 2, 1])
    made = plan(df, client, model="pixel-1", prompt="{caption}")
    out = made.run(run_id="blocks", output_dir=tmp_path / "out", progress=False)
    assert (out["status"] == "completed").all()
    assert list(out.index) == [5, 4, 3, 2, 1]
    for label, gid in out["generation_id"].items():
        request = made.requests.loc[label, "request"]
        key = client.generations.get(gid).idempotency_key
        assert key == row_key("blocks", label, request) != made.requests.loc[label, "key"]
    paid = charges(tenant)[1]
    again = made.run(run_id="blocks", output_dir=tmp_path / "out", progress=False)
    assert list(again["generation_id"]) == list(out["generation_id"])
    assert charges(tenant)[1] == paid

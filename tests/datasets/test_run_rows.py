"""``run_rows``: the executor every engine calls, against the real sandbox."""

from __future__ import annotations

import pandas as pd

from mediagen.datasets import RESULT_COLUMNS, row_key, run_rows


def _rows(requests, run_id="run-1", index=None):
    index = list(range(len(requests))) if index is None else index
    return pd.DataFrame(
        {
            "request": requests,
            "key": [row_key(run_id, label, r) for label, r in zip(index, requests, strict=True)],
        },
        index=index,
    )


def test_each_row_runs_once_and_a_second_call_reads_it_back(client, tenant, charges, tmp_path):
    requests = [{"model": "pixel-1", "prompt": f"a red fox, take {i}"} for i in range(5)]
    rows = _rows(requests, index=list("abcde"))
    first = run_rows(client, rows, output_dir=tmp_path / "out", concurrency=3)
    assert list(first.columns) == list(RESULT_COLUMNS)
    assert list(first.index) == list("abcde")
    assert dict(first.dtypes.astype(str)) == RESULT_COLUMNS
    assert (first["status"] == "completed").all()
    assert all((tmp_path / "out").joinpath(p).exists() for p in first["output"])
    again = run_rows(client, rows, output_dir=tmp_path / "out", concurrency=3)
    assert list(again["generation_id"]) == list(first["generation_id"])
    credits, count = charges(tenant)
    assert set(count.values()) == {1}
    assert sorted(credits) == sorted(first["generation_id"])
    assert sum(credits.values()) == first["credits"].sum() > 0


def test_a_refused_row_is_a_line_of_the_frame_not_an_exception(client, charges, tenant):
    requests = [
        {"model": "pixel-1", "prompt": "fine"},
        {"model": "pixel-1", "prompt": "fails [[fail:safety]]"},
        {"model": "no-such-model", "prompt": "x"},
    ]
    out = run_rows(client, _rows(requests), output_dir=None)
    assert list(out["status"]) == ["completed", "failed", "error"]
    assert out.loc[1, "error_code"] == "safety"
    assert out.loc[2, "error_code"] == "not_found"
    assert out.loc[1, "credits"] == 0.0
    assert pd.isna(out.loc[2, "generation_id"])
    credits, _ = charges(tenant)
    assert sum(credits.values()) == out["credits"].sum()


def test_a_row_is_told_once_saved_while_the_rest_of_its_chunk_still_runs(client, tmp_path):
    """Progress moves with the rows: the quick row is told seconds before the slow one ends,
    not when the whole chunk has finished."""
    import time

    requests = [
        {"model": "pixel-1", "prompt": "quick [[slow:0.5]]"},
        {"model": "pixel-1", "prompt": "slow [[slow:6]]"},
    ]
    told: dict[object, float] = {}
    run_rows(
        client, _rows(requests), output_dir=tmp_path / "out",
        progress=lambda label, record: told.setdefault(label, time.monotonic()),
    )  # fmt: skip
    assert told[1] - told[0] > 2, told


def test_the_threads_of_a_run_read_the_models_catalog_entry_once(make_client, tmp_path):
    """Every row thread needs its model's kind; they must not all fetch the entry at once
    (a Dask worker's 8 threads did, 4 workers at a cluster's slow start: the first submits
    went out seconds late, behind 32 copies of one GET)."""
    import contextlib
    import threading

    import httpx

    asked: list[str] = []
    gate = threading.Barrier(8, timeout=0.5)

    def hook(request: httpx.Request) -> None:
        if request.url.path.startswith("/v1/models/"):
            asked.append(request.url.path)
            with contextlib.suppress(threading.BrokenBarrierError):
                gate.wait()  # hold the first fetch until 8 would be in flight together

    client = make_client(http_client=httpx.Client(timeout=60, event_hooks={"request": [hook]}))
    requests = [{"model": "pixel-1", "prompt": f"a lantern, take {i}"} for i in range(16)]
    out = run_rows(client, _rows(requests, run_id="kinds"), output_dir=tmp_path, concurrency=8)
    assert (out["status"] == "completed").all()
    assert asked == ["/v1/models/pixel-1"]

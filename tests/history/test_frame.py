"""Building the history frame from raw pages: columns, dtypes, journal join, fetching."""

from __future__ import annotations

import datetime as dt
import math
import subprocess
import sys

import pandas as pd
import pytest
from history_factory import T0, FakeListEndpoint, generation, journal_record

from mediagen.history import (
    concat_history,
    frame_from_generations,
    frame_from_pages,
    generations_frame,
    update_frame,
)
from mediagen.history._schema import API_COLUMNS, JOURNAL_COLUMNS, string_dtype


def _expected_dtype(kind: str):
    return string_dtype() if kind.startswith("string") else kind


def test_columns_and_honest_dtypes():
    frame = frame_from_generations(
        [
            generation(type="video", status="completed", credits=40.0),
            generation(type="image", status="failed", error=("safety", "blocked")),
            generation(type="audio", status="pending"),
        ]
    )
    for column, kind in {**API_COLUMNS, **JOURNAL_COLUMNS}.items():
        assert column in frame.columns
        if kind == "category":
            assert isinstance(frame[column].dtype, pd.CategoricalDtype), column
        else:
            assert frame[column].dtype == _expected_dtype(kind), column
    assert str(frame["created_at"].dtype) == "datetime64[ns, UTC]"
    assert list(frame["type"].cat.categories) == ["audio", "image", "video"]
    assert list(frame["status"].cat.categories) == ["completed", "failed", "pending"]


def test_values_per_status():
    done = generation(type="video", credits=43.2, latency=12.25, idempotency_key="k-1")
    failed = generation(type="image", status="failed", error=("safety", "blocked"), credits=0.0)
    failed["credits_charged"] = 0.0  # a service reporting 0 for a failure is still not spend
    pending = generation(type="audio", status="pending")
    frame = frame_from_generations([done, failed, pending]).set_index("id")

    row = frame.loc[done["id"]]
    assert row["credits_charged"] == 43.2
    assert row["latency_s"] == 12.25
    assert row["completed_at"] == pd.Timestamp(done["created_at"]) + pd.Timedelta(seconds=12.25)
    assert row["completed_at"].tzinfo is not None
    assert (row["n_outputs"], row["output_seconds"], row["width"], row["height"]) == (
        1,
        5.0,
        1280,
        720,
    )
    assert row["idempotency_key"] == "k-1"
    assert pd.isna(row["error_code"])

    row = frame.loc[failed["id"]]
    assert math.isnan(row["credits_charged"])
    assert (row["error_code"], row["error_message"]) == ("safety", "blocked")
    assert row["n_outputs"] == 0
    assert row["width"] is pd.NA

    row = frame.loc[pending["id"]]
    assert math.isnan(row["credits_charged"])
    assert pd.isna(row["completed_at"])
    assert math.isnan(row["latency_s"])


def test_outputs_seconds_summed_and_images_have_none():
    two_clips = generation(
        type="audio",
        model="tunesmith",
        outputs=[{"duration_seconds": 30.0}, {"duration_seconds": 30.5}],
    )
    images = generation(
        type="image",
        model="pixa",
        outputs=[{"width": 512, "height": 768}, {"width": 512, "height": 768}],
    )
    frame = frame_from_generations([two_clips, images]).set_index("id")
    assert frame.loc[two_clips["id"], "output_seconds"] == 60.5
    assert frame.loc[two_clips["id"], "n_outputs"] == 2
    assert math.isnan(frame.loc[images["id"], "output_seconds"])
    assert (frame.loc[images["id"], "width"], frame.loc[images["id"], "height"]) == (512, 768)


def test_unknown_fields_and_values_are_tolerated():
    odd = generation(status="completed", model="new-model", brand_new_field={"x": 1})
    odd["type"] = "3d"  # a media kind the service may add later
    frame = frame_from_generations([odd])
    assert frame.loc[0, "type"] == "3d"
    assert "3d" in frame["type"].cat.categories


def test_journal_join_by_generation_id_and_idempotency_key():
    by_id = generation(idempotency_key="key-a")
    by_key = generation(idempotency_key="key-b")
    unknown = generation()
    records = [
        journal_record(by_id, event="attempt", with_id=False, tier="720p", duration_seconds=5),
        journal_record(
            by_id,
            estimate=40.0,
            tier="1080p",
            duration_seconds=10,
            reference_counts={"reference_images": 2},
            mode="text_to_video",
        ),
        journal_record(by_key, event="attempt", with_id=False, estimate=20.0, discount=10.0),
    ]
    frame = frame_from_generations([by_id, by_key, unknown], journal=records).set_index("id")

    row = frame.loc[by_id["id"]]
    assert bool(row["journaled"])
    assert row["tier"] == "1080p"  # the later record wins
    assert row["requested_duration_s"] == 10.0
    assert row["refs_reference_images"] == 2
    assert row["estimate_credits_after_discount"] == 40.0
    assert row["mode"] == "text_to_video"  # from the journal when the API has no mode
    assert row["key_id"] == "key_test"

    row = frame.loc[by_key["id"]]
    assert bool(row["journaled"])
    assert (row["estimate_credits"], row["estimate_credits_after_discount"]) == (20.0, 18.0)
    assert row["estimate_discount_percent"] == 10.0
    assert row["refs_reference_images"] is pd.NA

    row = frame.loc[unknown["id"]]
    assert not bool(row["journaled"])
    assert math.isnan(row["estimate_credits"])
    assert pd.isna(row["tier"])


def test_api_mode_wins_over_journal_mode():
    gen = generation(mode="image_to_video")
    frame = frame_from_generations([gen], journal=[journal_record(gen, mode="text_to_video")])
    assert frame.loc[0, "mode"] == "image_to_video"


def test_journal_object_with_records_method():
    gen = generation()

    class Journal:
        def records(self):
            return iter([journal_record(gen, estimate=40.0)])

    frame = frame_from_generations([gen], journal=Journal())
    assert frame.loc[0, "estimate_credits"] == 40.0


def test_generations_frame_follows_cursors_at_max_page_size():
    gens = [generation(created=T0 + dt.timedelta(seconds=i)) for i in range(250)]
    endpoint = FakeListEndpoint(gens)
    frame = generations_frame(endpoint, journal=None)
    assert len(frame) == 250
    assert frame["id"].is_unique
    assert [q["limit"] for q in endpoint.queries] == [100, 100, 100]
    assert [q.get("after") for q in endpoint.queries] == [None, "100", "200"]
    # newest first, as the API lists them
    assert frame["created_at"].is_monotonic_decreasing


def test_generations_frame_passes_filters():
    gens = [generation(type="image"), generation(type="video"), generation(type="image")]
    endpoint = FakeListEndpoint(gens)
    since = T0 - dt.timedelta(days=1)
    frame = generations_frame(endpoint, journal=None, type="image", created_after=since)
    assert set(frame["type"]) == {"image"}
    assert len(frame) == 2
    assert endpoint.queries[0]["type"] == "image"
    assert endpoint.queries[0]["created_after"] == since.isoformat()


def test_generations_frame_rejects_bad_filters():
    endpoint = FakeListEndpoint([])
    with pytest.raises(TypeError, match="unknown filter"):
        generations_frame(endpoint, colour="red")
    with pytest.raises(ValueError, match="timezone-aware"):
        generations_frame(endpoint, created_after=dt.datetime(2026, 1, 1))


def test_generations_frame_names_an_async_client_rather_than_fetching_coroutines():
    import mediagen

    client = mediagen.AsyncClient(api_key="sk-never-sent", base_url="http://127.0.0.1:9")
    with pytest.raises(TypeError, match="not an AsyncClient"):
        generations_frame(client)


def test_pages_never_double_count_a_generation():
    gen = generation()
    frame = frame_from_pages([{"data": [gen]}, {"data": [gen]}])
    assert len(frame) == 1


def test_empty_history_has_the_schema():
    frame = generations_frame(FakeListEndpoint([]), journal=None)
    assert len(frame) == 0
    assert str(frame["created_at"].dtype) == "datetime64[ns, UTC]"
    assert frame["credits_charged"].dtype == "float64"


def test_update_frame_fetches_only_what_can_change():
    old_done = generation(created=T0, status="completed")
    waiting = generation(created=T0 + dt.timedelta(minutes=5), status="pending")
    gens = [old_done, waiting]
    endpoint = FakeListEndpoint(gens)
    frame = generations_frame(endpoint, journal=None)

    waiting.update(
        status="completed",
        completed_at="2026-03-30T22:05:09Z",
        credits_charged=40.0,
        outputs=[{"url": "u", "duration_seconds": 5.0, "width": 1280, "height": 720}],
    )
    newer = generation(created=T0 + dt.timedelta(minutes=9), status="pending")
    gens.append(newer)
    endpoint.queries.clear()

    updated = update_frame(endpoint, frame, journal=None)
    assert endpoint.queries[0]["created_after"] == "2026-03-30T22:04:59.999000+00:00"
    assert list(updated["id"]) == [newer["id"], waiting["id"], old_done["id"]]
    assert list(updated["status"]) == ["pending", "completed", "completed"]
    assert updated["credits_charged"].sum() == 80.0
    pd.testing.assert_frame_equal(updated, generations_frame(endpoint, journal=None))


def test_importing_history_does_not_import_pandas():
    code = (
        "import sys, mediagen, mediagen.history; "
        "assert 'pandas' not in sys.modules, 'pandas imported'; "
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_concat_history_keeps_dtypes_across_different_categories():
    first = generation(model="pixa", type="image")
    second = generation(model="vidra-2")
    a = frame_from_generations(
        [first], journal=[journal_record(first, reference_counts={"reference_images": 1})]
    )
    b = frame_from_generations([second])
    both = concat_history([a, b])
    assert list(both["model"].cat.categories) == ["pixa", "vidra-2"]
    assert both["refs_reference_images"].dtype == "Int64"
    assert both["refs_reference_images"].tolist()[0] == 1
    assert both["refs_reference_images"].tolist()[1] is pd.NA
    assert str(both["created_at"].dtype) == "datetime64[ns, UTC]"

"""Models are typed and tolerant: unknown fields kept, never fatal; datetimes tz-aware."""

from __future__ import annotations

import datetime as dt

import pytest

import mediagen

GENERATION = {
    "id": "0b6f3c1e-1111-4222-8333-444455556666",
    "type": "image",
    "status": "completed",
    "model": "pixel-1",
    "prompt": "a lighthouse",
    "created_at": "2026-03-01T10:00:00Z",
    "completed_at": "2026-03-01T10:00:04.250+02:00",
    "credits_charged": "1.5",
    "error": None,
    "idempotency_key": "k",
    "outputs": [
        {
            "url": "http://h/files/asset_1/out.png?sig=x",
            "asset_id": "asset_1",
            "content_type": "image/png",
            "width": "1024",
            "height": 1024,
            "brand_new_output_field": {"x": 1},
        }
    ],
    "brand_new_field": [1, 2, 3],
}


def test_unknown_fields_are_kept_and_reachable():
    gen = mediagen.Generation.from_dict(GENERATION)
    assert gen.extra == {"brand_new_field": [1, 2, 3]}
    assert gen["brand_new_field"] == [1, 2, 3]
    assert gen.get("missing", "default") == "default"
    assert gen.to_dict() == GENERATION
    assert gen.outputs[0].extra == {"brand_new_output_field": {"x": 1}}


def test_types_are_converted_and_datetimes_are_timezone_aware():
    gen = mediagen.Generation.from_dict(GENERATION)
    assert gen.created_at == dt.datetime(2026, 3, 1, 10, tzinfo=dt.timezone.utc)
    assert gen.completed_at.utcoffset() == dt.timedelta(hours=2)
    assert gen.credits_charged == 1.5
    assert gen.outputs[0].width == 1024
    assert gen.outputs[0].generation_id == gen.id


def test_missing_and_odd_values_are_not_fatal():
    gen = mediagen.Generation.from_dict({"id": "x", "created_at": "yesterday", "outputs": None})
    assert gen.created_at is None
    assert gen.outputs == []
    assert gen.status is None
    assert not gen.done
    assert mediagen.Generation.from_dict({}).id == ""


def test_failed_generation_is_a_value_until_asked_to_raise():
    data = {
        **GENERATION,
        "status": "failed",
        "outputs": [],
        "credits_charged": None,
        "error": {"code": "safety", "message": "blocked", "hint": "new field"},
    }
    gen = mediagen.Generation.from_dict(data)
    assert gen.failed
    assert gen.done
    assert gen.error.code == "safety"
    assert gen.error.extra == {"hint": "new field"}
    with pytest.raises(mediagen.GenerationFailedError) as caught:
        gen.raise_for_error()
    assert caught.value.code == "safety"
    assert gen.id in str(caught.value)
    completed = mediagen.Generation.from_dict(GENERATION)
    assert completed.raise_for_error() is completed


def test_catalog_credit_and_estimate_models_tolerate_new_fields():
    info = mediagen.ModelInfo.from_dict(
        {"id": "m", "type": "image", "modes": [{"id": "default"}], "future": True}
    )
    assert info.mode_ids == ["default"]
    assert info.extra == {"future": True}
    credits = mediagen.Credits.from_dict(
        {
            "balance": 10,
            "member_limit": {"limit": 50, "used": 40, "remaining": 10, "resets_at": "2026-04-01"},
            "wallet": "new",
        }
    )
    assert credits.member_limit.remaining == 10.0
    assert credits.member_limit.resets_at.tzinfo is not None
    estimate = mediagen.Estimate.from_dict({"credits": 3, "credits_after_discount": 2.7, "x": 1})
    assert estimate.credits_after_discount == 2.7
    assert estimate.extra == {"x": 1}


def test_models_compare_by_their_json_and_repr_briefly():
    a = mediagen.Generation.from_dict(GENERATION)
    b = mediagen.Generation.from_dict(dict(GENERATION))
    assert a == b
    assert "pixel-1" in repr(a)
    assert "brand_new_field" not in repr(a)


def test_an_unbound_model_says_it_has_no_client():
    gen = mediagen.Generation.from_dict(GENERATION)
    with pytest.raises(RuntimeError, match="not bound"):
        gen.wait()
    assert gen.outputs[0].local_path is None


def test_one_accessor_reads_a_model_and_the_json_it_came_from():
    from mediagen.display._progress import generation_message
    from mediagen.wire._fields import as_json, read_field

    data = {"id": "g", "status": "failed", "model": "pixel-1", "error": {"code": "safety"}, "x": 1}
    gen = mediagen.Generation.from_dict(data)
    assert read_field(gen, "status") == read_field(data, "status") == "failed"
    assert read_field(read_field(gen, "error"), "code") == "safety"
    assert read_field(read_field(data, "error"), "code") == "safety"
    assert read_field(None, "status", "?") == "?"
    assert as_json(gen) == as_json(data) == data
    assert generation_message(gen) == generation_message(data) == "failed · pixel-1 · error safety"

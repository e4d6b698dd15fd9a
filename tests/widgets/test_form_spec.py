"""The form's pure logic: controls from the catalog, choices following the tier, inline checks."""

from __future__ import annotations

from catalog_entries import SPEECH, VIDEO

from mediagen.widgets import _form_spec as spec


def _by_name(specs):
    return {s["name"]: s for s in specs}


def _has(mapping, **expected):
    return {k: mapping.get(k) for k in expected} == expected


def test_controls_follow_parameter_types_and_defaults_come_prefilled():
    values = spec.start_values(VIDEO, "text_to_video")
    assert values == {
        "tier": "720p",
        "duration_seconds": 5,
        "aspect_ratio": "16:9",
        "prompt": "a red fox",
    }
    fields = _by_name(spec.field_specs(VIDEO, "text_to_video", values))
    assert next(iter(fields)) == "prompt"  # required first
    assert fields["prompt"]["control"] == "textarea"
    assert fields["prompt"]["required"]
    assert fields["tier"]["control"] == "select"
    assert [o["value"] for o in fields["tier"]["options"]] == ["720p", "1080p"]
    assert fields["generate_audio"]["control"] == "toggle"
    assert _has(fields["cfg_scale"], control="number", minimum=0, maximum=1)
    assert fields["num_frames"]["step"] == 4
    assert _has(fields["reference_images"], control="reference", multiple=True, max_count=2)
    assert fields["keyframes"]["control"] == "json"
    assert fields["prompt_tags"]["control"] == "list"


def test_duration_choices_follow_the_tier_and_a_stale_choice_is_flagged_inline():
    values = spec.start_values(VIDEO, "text_to_video") | {"duration_seconds": 10}
    fields = _by_name(spec.field_specs(VIDEO, "text_to_video", values))
    assert [o["value"] for o in fields["duration_seconds"]["options"]] == [5, 10]
    assert spec.check(VIDEO, "text_to_video", values) == {}

    values["tier"] = "1080p"
    fields = _by_name(spec.field_specs(VIDEO, "text_to_video", values))
    assert [o["value"] for o in fields["duration_seconds"]["options"]] == [5]
    issues = spec.check(VIDEO, "text_to_video", values)
    assert issues == {
        "duration_seconds": "Duration seconds 10 is not available at 1080p (allowed: 5)"
    }


def test_bounds_multiples_required_json_and_rules_are_checked_before_sending():
    values = {"prompt": "", "cfg_scale": 1.5, "num_frames": 42, "keyframes": "[{", "tier": "720p"}
    issues = spec.check(VIDEO, "text_to_video", values)
    assert issues["prompt"] == "Prompt is required"
    assert issues["cfg_scale"] == "Cfg scale must be at most 1"
    assert issues["num_frames"] == "Num frames must be a multiple of 4"
    assert issues["keyframes"].startswith("Keyframes is not valid JSON")

    both = {
        "prompt": "x",
        "keyframes": [{"image": "asset_1", "frame_index": 0}],
        "reference_images": ["asset_2"],
    }
    assert (
        spec.check(VIDEO, "text_to_video", both)["_form"]
        == "Use only one of Keyframes / Reference images"
    )
    too_many = {"prompt": "x", "reference_images": ["a", "b", "c"]}
    assert (
        spec.check(VIDEO, "text_to_video", too_many)["reference_images"]
        == "Reference images: at most 2 (got 3)"
    )
    long_at_1080 = {"prompt": "x", "tier": "1080p", "num_frames": 100}
    assert (
        spec.check(VIDEO, "text_to_video", long_at_1080)["_form"]
        == "Num frames is at most 80 when Tier = 1080p"
    )


def test_mode_ranges_narrow_bounds_and_one_of_required_rule():
    values = spec.start_values(SPEECH, None)
    assert values == {"voice_name": "Aria", "text": "Hello there"}
    fields = _by_name(spec.field_specs(SPEECH, None, values))
    assert (fields["speed"]["minimum"], fields["speed"]["maximum"]) == (0.7, 1.3)
    assert [o["value"] for o in fields["voice_name"]["options"]] == ["Aria", "Bo"]
    assert spec.check(SPEECH, None, {"speed": 1.5})["speed"] == "Speed must be at most 1.3"
    assert spec.check(SPEECH, None, {})["_form"] == "Give one of Text / Segments"


def test_request_coerces_values_and_leaves_out_empty_fields():
    values = {
        "prompt": "fox",
        "tier": "720p",
        "duration_seconds": "10",
        "cfg_scale": "",
        "prompt_tags": "calm, slow ",
        "keyframes": '[{"image": "asset_1", "frame_index": 0}]',
    }
    assert spec.build_request(VIDEO, "text_to_video", values) == {
        "model": "vidra-2",
        "mode": "text_to_video",
        "prompt": "fox",
        "tier": "720p",
        "duration_seconds": 10,
        "prompt_tags": ["calm", "slow"],
        "keyframes": [{"image": "asset_1", "frame_index": 0}],
    }
    # single-mode models leave `mode` out
    assert spec.build_request(SPEECH, None, {"text": "hi"}) == {"model": "voxa-1", "text": "hi"}


def test_the_catalog_judges_shapes_and_the_form_words_them_with_the_label():
    values = {"prompt": "x", "keyframes": '{"image": "asset_1"}', "tier": "720p"}
    assert spec.check(VIDEO, "text_to_video", values) == {
        "keyframes": "Keyframes must be a list of objects"
    }
    # a voice is known by its id as well as its name, as the service knows it
    assert spec.check(SPEECH, None, {"text": "hi", "voice_name": "voice_bo"}) == {}
    assert spec.check(SPEECH, None, {"text": "hi", "voice_name": "Cy"}) == {
        "voice_name": "Voice name 'Cy' is not available (allowed: Aria, Bo)"
    }

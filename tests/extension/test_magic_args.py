"""The ``%%mediagen`` line checked against a catalog entry: pure, no service needed.

The entries are shaped like docs/wire-contract.md; the same checks run against the sandbox's real
catalog in test_magics.py.
"""

from __future__ import annotations

import pytest

from mediagen.magics._cell_line import MagicUsageError, parse_cell_line
from mediagen.magics._request import build_request, choose_model, prompt_field

VIDEO = {
    "id": "vidra-2",
    "type": "video",
    "mode_required": True,
    "parameters": {
        "prompt": {"type": "string", "max_length": 4000},
        "negative_prompt": {"type": "string"},
        "duration_seconds": {"type": "integer"},
        "tier": {"type": "string", "enum": ["720p", "1080p"]},
        "aspect_ratio": {"type": "string"},
        "generate_audio": {"type": "boolean"},
        "cfg_scale": {"type": "number", "minimum": 0, "maximum": 1},
        "first_frame": {"type": "asset", "media": "image"},
        "reference_images": {"type": "asset_list", "media": "image"},
        "multi_prompt": {"type": "multi_prompt"},
    },
    "modes": [
        {
            "id": "text_to_video",
            "required": ["prompt"],
            "optional": [
                "negative_prompt",
                "tier",
                "duration_seconds",
                "aspect_ratio",
                "generate_audio",
                "cfg_scale",
                "reference_images",
                "multi_prompt",
            ],
            "allowed": {
                "duration_seconds": {"by_tier": {"720p": [5, 10], "1080p": [5]}},
                "aspect_ratio": ["16:9", "9:16", "1:1"],
            },
            "defaults": {"tier": "720p", "duration_seconds": 5},
            "max_counts": {"reference_images": 2},
        },
        {
            "id": "image_to_video",
            "required": ["prompt", "first_frame"],
            "optional": ["tier", "duration_seconds"],
            "allowed": {"duration_seconds": {"by_tier": {"720p": [5, 10], "1080p": [5]}}},
            "defaults": {"tier": "720p", "duration_seconds": 5},
        },
    ],
}
SPEECH = {
    "id": "voxa-tts",
    "type": "audio",
    "audio_kind": "speech",
    "parameters": {
        "text": {"type": "string"},
        "voice_name": {"type": "voice"},
        "segments": {"type": "segments"},
    },
    "modes": [{"id": "default", "required": [], "optional": ["text", "voice_name", "segments"]}],
    "rules": [{"kind": "mutually_exclusive", "fields": ["text", "segments"]}],
    "voices": [{"id": "voice_aria", "name": "Aria"}, {"id": "voice_bo", "name": "Bo"}],
}


def request_for(entry, line, body="a red fox", **kwargs):
    return build_request(entry, parse_cell_line(line), body, **kwargs)


def test_line_options_and_fields_are_split():
    options = parse_cell_line(
        "video --model vidra-2 --tier=1080p --generate-audio -o clip --yes --cfg_scale -0.5"
    )
    assert options.kind == "video"
    assert options.model == "vidra-2"
    assert options.output_name == "clip"
    assert options.yes is True
    assert options.wait is True
    assert options.fields == {"tier": "1080p", "generate_audio": True, "cfg_scale": "-0.5"}


def test_request_is_typed_from_the_catalog_and_mode_inferred():
    request = request_for(
        VIDEO, "video --duration_seconds 10 --generate_audio false --cfg_scale 0.5"
    )
    assert request == {
        "model": "vidra-2",
        "mode": "text_to_video",
        "prompt": "a red fox",
        "duration_seconds": 10,
        "generate_audio": False,
        "cfg_scale": 0.5,
    }
    assert request_for(VIDEO, "video --first_frame asset_1")["mode"] == "image_to_video"


@pytest.mark.parametrize(
    ("line", "body", "expected"),
    [
        ("video --tier 4k", "x", "allowed values: 720p, 1080p"),
        ("video --tier 1080p --duration_seconds 10", "x", "at tier 1080p; allowed values: 5"),
        ("video --aspect_ratio 4:3", "x", "allowed values: 16:9, 9:16, 1:1"),
        ("video --colour red", "x", "--colour is not a field of vidra-2; its fields are:"),
        ("video --tierr 720p", "x", "--tierr is not a field of vidra-2; did you mean --tier?"),
        ("video --aspect_ratio 16-9", "x", "(text_to_video); did you mean 16:9?"),
        ("vidoe", "x", "(got 'vidoe'; did you mean video?)"),
        ("video --mode image_to_video", "x", "needs first_frame"),
        ("video --mode nope", "x", "modes: text_to_video, image_to_video"),
        ("video --cfg_scale 2", "x", "between 0 and 1"),
        ("video --duration_seconds five", "x", "whole number"),
        ("video --generate_audio maybe", "x", "use true or false"),
        ("video --reference_images a,b,c", "x", "at most 2"),
        ("video --multi_prompt not-json", "x", "takes JSON"),
        ("video", "", "needs prompt (the cell body)"),
        ("video --tier", "x", "needs a value"),
        ("movie", "x", "one of: image, video, audio"),
        ("video -o 2fast", "x", "Python variable name"),
        ("video stray", "x", "options start with --"),
    ],
)
def test_mistakes_name_what_is_allowed(line, body, expected):
    with pytest.raises(MagicUsageError, match=None) as info:
        request_for(VIDEO, line, body)
    assert expected in str(info.value)


def test_speech_body_is_the_text_and_voices_are_checked():
    assert prompt_field(SPEECH) == "text"
    request = request_for(SPEECH, "audio --voice_name Aria", body="Hello there")
    assert request == {"model": "voxa-tts", "text": "Hello there", "voice_name": "Aria"}
    with pytest.raises(MagicUsageError, match="voices: Aria, Bo"):
        request_for(SPEECH, "audio --voice_name Zed")
    segments = '[{"voice_name": "Aria", "text": "hi"}]'
    with pytest.raises(MagicUsageError, match="only one of: text, segments"):
        request_for(SPEECH, f"audio --segments '{segments}'", body="also text")
    assert request_for(SPEECH, f"audio --segments '{segments}'", body="")["segments"] == [
        {"voice_name": "Aria", "text": "hi"}
    ]


def test_reference_fields_go_through_the_resolver_and_variables():
    seen = []

    def resolve(field, value, media):
        seen.append((field, value, media))
        return f"asset_for_{value}"

    namespace = {"refs": ["one", "two"]}

    def lookup(text):
        return (text in namespace, namespace.get(text))

    request = request_for(
        VIDEO,
        "video --reference_images refs",
        resolve_asset=resolve,
        lookup=lookup,
    )
    assert request["reference_images"] == ["asset_for_one", "asset_for_two"]
    assert seen == [("reference_images", "one", "image"), ("reference_images", "two", "image")]


def test_model_choice():
    models = [VIDEO, SPEECH]
    assert choose_model("video", models, None, None)["id"] == "vidra-2"
    assert choose_model("audio", models, "voxa-tts", None)["id"] == "voxa-tts"
    with pytest.raises(MagicUsageError, match="video models: vidra-2"):
        choose_model("video", models, "nope", None)
    with pytest.raises(MagicUsageError, match="'vidra2'; did you mean vidra-2\\?"):
        choose_model("video", models, "vidra2", None)
    with pytest.raises(MagicUsageError, match="is a audio model, not video"):
        choose_model("video", models, "voxa-tts", None)

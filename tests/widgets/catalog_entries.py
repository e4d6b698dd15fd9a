"""Catalog entries shaped exactly like docs/wire-contract.md, for the pure form tests."""

VIDEO = {
    "id": "vidra-2",
    "object": "model",
    "type": "video",
    "name": "Vidra 2",
    "description": "Text and image to video",
    "mode_required": True,
    "parameters": {
        "prompt": {"type": "string", "max_length": 4000},
        "negative_prompt": {"type": "string", "max_length": 1000},
        "duration_seconds": {"type": "integer"},
        "tier": {"type": "string", "enum": ["720p", "1080p"]},
        "aspect_ratio": {"type": "string"},
        "generate_audio": {"type": "boolean"},
        "cfg_scale": {"type": "number", "minimum": 0, "maximum": 1},
        "first_frame": {"type": "asset", "media": "image"},
        "reference_images": {"type": "asset_list", "media": "image"},
        "num_frames": {"type": "integer", "minimum": 40, "maximum": 120, "multiple_of": 4},
        "keyframes": {"type": "keyframes"},
        "prompt_tags": {"type": "string_list"},
    },
    "modes": [
        {
            "id": "text_to_video",
            "name": "Text to video",
            "required": ["prompt"],
            "optional": [
                "negative_prompt",
                "tier",
                "duration_seconds",
                "aspect_ratio",
                "generate_audio",
                "cfg_scale",
                "reference_images",
                "num_frames",
                "keyframes",
                "prompt_tags",
            ],
            "allowed": {
                "duration_seconds": {"by_tier": {"720p": [5, 10], "1080p": [5]}},
                "aspect_ratio": ["16:9", "9:16", "1:1"],
            },
            "defaults": {"tier": "720p", "duration_seconds": 5, "aspect_ratio": "16:9"},
            "max_counts": {"reference_images": 2},
            "price": {"unit": "second", "by": "tier", "table": {"720p": 8, "1080p": 16}},
        },
        {
            "id": "image_to_video",
            "name": "Image to video",
            "required": ["prompt", "first_frame"],
            "optional": ["tier", "duration_seconds"],
            "allowed": {"duration_seconds": [5]},
            "defaults": {"tier": "720p", "duration_seconds": 5},
            "price": {"unit": "second", "by": "tier", "table": {"720p": 8, "1080p": 16}},
        },
    ],
    "tiers": [
        {"id": "720p", "width": 1280, "height": 720},
        {"id": "1080p", "width": 1920, "height": 1080},
    ],
    "rules": [
        {"kind": "mutually_exclusive", "fields": ["keyframes", "reference_images"]},
        {"kind": "max_duration", "field": "num_frames", "when": {"tier": "1080p"}, "maximum": 80},
    ],
    "price_summary": "8-16 credits per second",
    "example_request": {
        "text_to_video": {"model": "vidra-2", "mode": "text_to_video", "prompt": "a red fox"},
        "image_to_video": {"model": "vidra-2", "mode": "image_to_video", "prompt": "it moves"},
    },
}

SPEECH = {
    "id": "voxa-1",
    "type": "audio",
    "audio_kind": "speech",
    "name": "Voxa 1",
    "description": "Speech",
    "mode_required": False,
    "parameters": {
        "text": {"type": "string", "max_length": 5000},
        "segments": {"type": "segments"},
        "voice_name": {"type": "voice"},
        "speed": {"type": "number", "minimum": 0.5, "maximum": 2},
    },
    "modes": [
        {
            "id": "default",
            "name": "Speech",
            "required": [],
            "optional": ["text", "segments", "voice_name", "speed"],
            "ranges": {"speed": {"minimum": 0.7, "maximum": 1.3}},
            "defaults": {"voice_name": "Aria"},
        }
    ],
    "voices": [
        {"id": "voice_aria", "name": "Aria", "language": "en"},
        {"id": "voice_bo", "name": "Bo", "language": "sv"},
    ],
    "rules": [
        {"kind": "mutually_exclusive", "fields": ["text", "segments"]},
        {"kind": "one_of_required", "fields": ["text", "segments"]},
    ],
    "price_summary": "0.02 credits per character",
    "example_request": {"default": {"model": "voxa-1", "text": "Hello there"}},
}

IMAGE = {
    "id": "pixa-1",
    "type": "image",
    "name": "Pixa 1",
    "description": "Images from text",
    "mode_required": False,
    "parameters": {
        "prompt": {"type": "string"},
        "generate_image_count": {"type": "integer", "minimum": 1, "maximum": 4},
    },
    "modes": [
        {
            "id": "default",
            "name": "Default",
            "required": ["prompt"],
            "optional": ["generate_image_count"],
            "defaults": {"generate_image_count": 1},
        }
    ],
    "price_summary": "2 credits per image",
    "example_request": {"default": {"model": "pixa-1", "prompt": "a lighthouse"}},
}

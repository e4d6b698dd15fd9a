"""Parameter schemas of every request field, per endpoint (the catalog's ``parameters``).

A model's entry lists the subset its modes accept. Types (docs/wire-contract.md): ``string``,
``integer``, ``number``, ``boolean``, ``asset`` / ``asset_list`` (with ``media``), ``keyframes``,
``elements``, ``segments``, ``multi_prompt``, ``composition_plan``, ``reference_names``,
``string_list``, ``voice``. Bounds repeat the request schema's; modes narrow them (``ranges``).
"""

from __future__ import annotations

from typing import Any

from .. import limits


def _s(description: str, **extra: Any) -> dict:
    return {"type": "string", "description": description, **extra}


def _i(description: str, **extra: Any) -> dict:
    return {"type": "integer", "description": description, **extra}


def _n(description: str, **extra: Any) -> dict:
    return {"type": "number", "description": description, **extra}


def _b(description: str) -> dict:
    return {"type": "boolean", "description": description}


def _a(media: str, description: str) -> dict:
    return {"type": "asset", "media": media, "description": description}


def _al(media: str, description: str) -> dict:
    return {"type": "asset_list", "media": media, "description": description}


def _unit(description: str) -> dict:
    return _n(description, minimum=0, maximum=1)


COMMON = {
    "project_id": _s("Optional project scope for the generated asset."),
}

VIDEO: dict[str, dict] = {
    "prompt": _s("Text prompt.", max_length=limits.PROMPT_CHARS),
    "negative_prompt": _s(
        "What to keep out of the video.", max_length=limits.NEGATIVE_PROMPT_CHARS
    ),
    "tier": _s("Resolution tier (see `tiers`)."),
    "variant": _s(
        "Speed/quality variant, priced by the model's credit matrix.",
        max_length=limits.VARIANT_CHARS,
    ),
    "quality": _s("Quality setting."),
    "aspect_ratio": _s("Aspect ratio of the output, e.g. 16:9."),
    "duration_seconds": _i("Requested duration in seconds (allowed values per mode and tier)."),
    "resolution": _s("Output resolution.", enum=["480p", "580p", "720p"]),
    "frames_per_second": _i("Output frame rate.", minimum=4, maximum=60),
    "num_frames": _i("Output frame count.", minimum=40, maximum=120, multiple_of=4),
    "generate_audio": _b("Generate a native soundtrack (priced by a multiplier)."),
    "keep_audio": _b("Keep the source video's audio (needs source_video)."),
    "keep_original_sound": _b("Keep the audio of the motion reference video."),
    "cfg_scale": _n("Prompt adherence.", minimum=0, maximum=1),
    "shot_type": _s("Multi-shot structure.", enum=["customize", "intelligent"]),
    "multi_prompt": {
        "type": "multi_prompt",
        "description": "Shots: [{prompt, duration}]; the total duration is their sum.",
    },
    "elements": {
        "type": "elements",
        "description": "Characters or objects referenced by ordinal handles: [{name, images}].",
    },
    "first_frame": _a("image", "Opening frame."),
    "last_frame": _a("image", "Closing frame."),
    "keyframes": {
        "type": "keyframes",
        "description": "Images pinned to frames of the 24 fps output timeline: "
        "[{image, frame_index}], frame_index < duration_seconds * 24.",
    },
    "reference_image": _a("image", "A single reference image."),
    "reference_images": _al("image", "Reference images."),
    "reference_videos": _al("video", "Reference videos."),
    "reference_audios": _al("audio", "Reference audio."),
    "reference_names": {
        "type": "reference_names",
        "description": "Aliases for references, keyed by reference_images / reference_videos / "
        "reference_audios; one name per reference.",
    },
    "element_images": _al("image", "Images for multi-image generation."),
    "audio": _a("audio", "The driving audio."),
    "audio_duration_seconds": _n(
        "Seconds of audio to animate (priced per second); default: the audio asset's length.",
        exclusiveMinimum=0,
    ),
    "face_image": _a("image", "The face to animate."),
    "character_image": _a("image", "The character to animate."),
    "motion_video": _a("video", "The motion to transfer."),
    "character_id": _i("Which person in the image (0 is leftmost).", minimum=0, maximum=10),
    "character_orientation": _s(
        "`image`: keep the person's orientation (output at most 10 s); `video`: follow the "
        "motion video (at most 30 s).",
        enum=["image", "video"],
    ),
    "source_video": _a("video", "Source video to edit, restyle or enhance."),
    "source_generation_id": _s(
        "Id of a completed video generation of this organization to extend.",
        refers_to="generation",
    ),
    "previous_interaction_id": _s(
        "A result's result_meta.interaction_id to continue from (conversational editing).",
        max_length=limits.INTERACTION_ID_CHARS,
        refers_to="interaction",
    ),
    "enhancement_model": _s("Upscaler/enhancer model.", max_length=limits.VARIANT_CHARS),
    "compression": _unit("Compression-artifact removal, 0..1."),
    "grain": _n("Film grain, 0..0.1.", minimum=0, maximum=0.1),
    "halo": _unit("Halo reduction, 0..1."),
    "noise": _unit("Noise reduction, 0..1."),
    "recover_detail": _unit("Original-detail recovery, 0..1."),
    "softness": _n("1 (sharpest) to 5 (softest).", minimum=1, maximum=5),
    **COMMON,
}

IMAGE: dict[str, dict] = {
    "prompt": _s("Text prompt.", max_length=limits.PROMPT_CHARS),
    "aspect_ratio": _s("Aspect ratio, e.g. 1:1, 16:9, 9:16."),
    "generate_image_count": _i("Number of images.", minimum=1),
    "reference_images": _al("image", "Reference images (image-to-image)."),
    "image_size": _s(
        "Aspect preset.",
        enum=[
            "square",
            "square_hd",
            "portrait_4_3",
            "portrait_16_9",
            "landscape_4_3",
            "landscape_16_9",
        ],
    ),
    "size": _s("Concrete size WxH.", pattern=r"^[0-9]{1,5}x[0-9]{1,5}$"),
    "background": _s("Background.", enum=["transparent", "opaque", "auto"]),
    "quality": _s("Quality setting (the model's catalog default when omitted)."),
    "resolution": _s("Resolution tier."),
    "mask_image": _a("image", "Inpainting mask (white = repaint); needs reference_images."),
    "moderation": _s("Moderation strictness.", enum=["auto", "low"]),
    "negative_prompt": _s(
        "What to keep out of the image.", max_length=limits.NEGATIVE_PROMPT_CHARS
    ),
    "output_format": _s("File format.", enum=["png", "webp", "jpeg"]),
    "reference_names": {
        "type": "reference_names",
        "description": "Aliases for reference images: {reference_images: [name, ...]}.",
    },
    "response_format": _s(
        "`b64_json` also returns each image inline as base64.", enum=["url", "b64_json"]
    ),
    **COMMON,
}

AUDIO: dict[str, dict] = {
    "text": _s(
        "Text to speak (single speaker); exclusive with segments.",
        max_length=limits.SPEECH_TEXT_CHARS,
    ),
    "voice_name": {"type": "voice", "description": "A voice name or id from `voices`."},
    "segments": {
        "type": "segments",
        "description": "Multi-speaker script [{voice_name, text}], one audio file.",
    },
    "prompt": _s("Free-text music prompt.", max_length=limits.NEGATIVE_PROMPT_CHARS),
    "prompt_tags": {"type": "string_list", "description": "Style tags."},
    "composition_plan": {
        "type": "composition_plan",
        "description": "{sections: [{name, duration_seconds, lines?}]}; the sections' durations "
        "make the track length.",
    },
    "lyrics": _s("Lyrics to sing.", max_length=limits.PROMPT_CHARS),
    "seed": _i("Random seed (not with sample_count above 1)."),
    "sample_count": _i("Number of alternative tracks.", minimum=1, maximum=4),
    "bpm": _i("Tempo override in beats per minute.", minimum=60, maximum=200),
    "duration_seconds": _n("Track length in seconds.", minimum=3, maximum=600),
    "energy": _s("Energy level.", enum=["low", "medium", "high"]),
    "tempo": _s("Tempo feel.", enum=["slow", "medium", "fast"]),
    "temperature": _n("Sampling temperature.", minimum=0, maximum=2),
    "instrumental": _b("Instrumental only (no vocals; not with lyrics)."),
    "language": _s("Language of the speech, e.g. en (default: the voice's)."),
    "text_normalization": _s("Spell out numbers and abbreviations.", enum=["on", "off", "auto"]),
    "output_format": _s(
        "Encoding.", enum=["mp3_44100_128", "mp3_44100_192", "wav_44100", "wav_24000"]
    ),
    "stability": _unit("Voice stability, 0..1."),
    "similarity_boost": _unit("Voice similarity, 0..1."),
    "style": _unit("Style exaggeration, 0..1."),
    "speed": _n("Speech speed.", minimum=0.7, maximum=1.3),
    "previous_text": _s(
        "Text before this one (context, not spoken).", max_length=limits.SPEECH_TEXT_CHARS
    ),
    "next_text": _s(
        "Text after this one (context, not spoken).", max_length=limits.SPEECH_TEXT_CHARS
    ),
    "previous_generation_ids": {"type": "string_list", "description": "Earlier generations."},
    "next_generation_ids": {"type": "string_list", "description": "Later generations."},
    "previous_request_ids": {"type": "string_list", "description": "Earlier request ids."},
    "next_request_ids": {"type": "string_list", "description": "Later request ids."},
    "pronunciation_dictionary_ids": {
        "type": "string_list",
        "description": "Pronunciation dictionary entry ids.",
    },
    "voice_profile_id": _s("A voice profile id."),
    "voice_embedding_id": _s("A cloned-voice embedding id."),
    "model_size": _s("Model size (large is priced higher).", enum=["small", "large"]),
    "content_preset": _s("Content type preset.", enum=["podcast", "audiobook", "advert", "game"]),
    "negative_prompt": _s("Things to avoid in the music.", max_length=limits.NEGATIVE_PROMPT_CHARS),
    **COMMON,
}

_LISTS = {
    "asset_list",
    "keyframes",
    "elements",
    "segments",
    "multi_prompt",
    "string_list",
}


def _bounded(params: dict[str, dict]) -> dict[str, dict]:
    """Every string and list parameter states its bound (the request schemas enforce them):
    strings without an enum, pattern or bound of their own take ``limits.NAME_CHARS``, lists
    ``limits.LIST_ITEMS`` items (a mode's ``max_counts`` may narrow it)."""
    for schema in params.values():
        kind = schema["type"]
        if kind in ("string", "asset", "voice") and not {"enum", "pattern"} & schema.keys():
            schema.setdefault("max_length", limits.NAME_CHARS)
        elif kind in _LISTS:
            schema.setdefault("max_items", limits.LIST_ITEMS)
    return params


BY_KIND = {"video": _bounded(VIDEO), "image": _bounded(IMAGE), "audio": _bounded(AUDIO)}

# Request fields with a schema default: a client may send them as-is to any model, so a mode
# that does not take them ignores them when they carry exactly this value.
SCHEMA_DEFAULTS = {
    "video": {
        "prompt": "",
        "keep_original_sound": False,
        "character_id": 0,
        "character_orientation": "image",
    },
    "image": {"prompt": ""},
    "audio": {},
}

# Fields every mode takes besides its own (docs/wire-contract.md).
ALWAYS_ACCEPTED = ("model", "mode", "idempotency_key", "project_id")

"""Every name the spec leaves "not shown", in one place (docs/wire-contract.md); below the client
and the catalog, which both read it.

Pointing the client at a different real service that chose other names is an edit here, not a
hunt through the code. Names the spec *does* fix are used as the spec names them.
"""

from __future__ import annotations

# Paths (the spec's).
SUBMIT_PATHS = {"video": "/v1/videos", "image": "/v1/images", "audio": "/v1/audio"}
#: the client's resource of each kind's submit endpoint (``client.resource(kind)``)
KIND_RESOURCES = {"video": "videos", "image": "images", "audio": "audio"}
GENERATION_PATH = "/v1/generations/{generation_id}"
GENERATIONS_PATH = "/v1/generations"
MODELS_PATH = "/v1/models"
MODEL_PATH = "/v1/models/{model_id}"
ESTIMATE_PATH = "/v1/models/{model_id}/estimate"
CREDITS_PATH = "/v1/credits"
UPLOADS_PATH = "/v1/uploads"

# Headers.
IDEMPOTENCY_HEADER = "Idempotency-Key"
RETRY_AFTER_HEADER = "Retry-After"
TRACE_HEADER = "X-Trace-Id"

# 402 payment_required: the shortfall as numbers, beside the spec's fields of the error object.
ERROR_REQUIRED_CREDITS = "required_credits"
ERROR_AVAILABLE_CREDITS = "available_credits"

# List envelopes.
LIST_ITEMS = "data"
LIST_NEXT_CURSOR = "next_cursor"
LIST_HAS_MORE = "has_more"
LIST_CURSOR_PARAM = "after"
LIST_LIMIT_PARAM = "limit"
LIST_FILTERS = ("status", "type", "model", "created_after")
PAGE_SIZE_MAX = 100

# Upload registration body.
UPLOAD_FILENAME = "filename"
UPLOAD_CONTENT_TYPE = "content_type"
UPLOAD_SIZE = "size_bytes"
UPLOAD_CONTENT_TYPES = (
    "image/png",
    "image/jpeg",
    "image/webp",
    "video/mp4",
    "video/webm",
    "audio/mpeg",
    "audio/wav",
    "audio/mp4",
    "audio/ogg",
)
#: file suffix -> content type, for the types the service accepts (mimetypes varies by OS).
SUFFIX_CONTENT_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".mp4": "video/mp4",
    ".webm": "video/webm",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
    ".m4a": "audio/mp4",
    ".ogg": "audio/ogg",
}
CONTENT_TYPE_SUFFIXES = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/webp": ".webp",
    "video/mp4": ".mp4",
    "video/webm": ".webm",
    "audio/mpeg": ".mp3",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mp4": ".m4a",
    "audio/ogg": ".ogg",
}

# Estimate query names: submit field -> query parameter, per kind of model (the first field given
# wins a name), then the fields every kind passes under their own name. The query names the spec
# does not show (the rest are the catalog's, in ``params``): see docs/wire-contract.md.
ESTIMATE_QUERY_NAMES: dict[str, tuple[tuple[str, str], ...]] = {
    "image": (
        ("quality", "image_quality"),
        ("resolution", "image_resolution"),
        ("size", "size"),
        ("aspect_ratio", "size"),
        ("generate_image_count", "generation_count"),
    ),
    "other": (
        ("tier", "tier"),
        ("resolution", "tier"),
        ("quality", "quality"),
        ("sample_count", "generation_count"),
    ),
}
ESTIMATE_PASS_THROUGH = ("variant", "generate_audio", "mode", "idempotency_key")
ESTIMATE_DURATION = "duration_seconds"
ESTIMATE_TEXT_LENGTH = "text_length"
ESTIMATE_REFERENCE_IMAGE_COUNT = "reference_image_count"
ESTIMATE_FIRST_FRAME_COUNT = "first_frame_count"
ESTIMATE_PARAMS = "params"

# Spec fields of each submit endpoint (the spec's tables plus the wire contract's settings).
VIDEO_FIELDS = (
    "model", "prompt", "negative_prompt", "mode", "tier", "variant", "quality", "aspect_ratio",
    "duration_seconds", "resolution", "frames_per_second", "num_frames", "generate_audio",
    "keep_audio", "keep_original_sound", "cfg_scale", "shot_type", "multi_prompt", "elements",
    "first_frame", "last_frame", "keyframes", "reference_image", "reference_images",
    "reference_videos", "reference_audios", "reference_names", "element_images", "audio",
    "audio_duration_seconds", "face_image", "character_image", "motion_video", "character_id",
    "character_orientation", "source_video", "source_generation_id", "previous_interaction_id",
    "project_id", "enhancement_model", "compression", "grain", "halo", "noise", "recover_detail",
    "softness", "idempotency_key",
)  # fmt: skip
IMAGE_FIELDS = (
    "model", "prompt", "aspect_ratio", "generate_image_count", "reference_images",
    "idempotency_key", "image_size", "size", "background", "quality", "resolution", "mask_image",
    "moderation", "negative_prompt", "output_format", "project_id", "reference_names",
    "response_format",
)  # fmt: skip
AUDIO_FIELDS = (
    "model", "text", "voice_name", "segments", "prompt", "prompt_tags",
    "composition_plan", "lyrics", "seed", "sample_count", "idempotency_key", "bpm",
    "duration_seconds", "energy", "tempo", "temperature", "instrumental", "language",
    "text_normalization", "output_format", "stability", "similarity_boost", "style", "speed",
    "previous_text", "next_text", "previous_generation_ids", "next_generation_ids",
    "previous_request_ids", "next_request_ids", "pronunciation_dictionary_ids",
    "voice_profile_id", "voice_embedding_id", "model_size", "content_preset", "project_id",
    "negative_prompt",
)  # fmt: skip
SUBMIT_FIELDS = {"video": VIDEO_FIELDS, "image": IMAGE_FIELDS, "audio": AUDIO_FIELDS}

# Body fields that take one asset id / a list of asset ids (reference inputs).
ASSET_FIELDS = (
    "first_frame", "last_frame", "reference_image", "audio", "face_image", "character_image",
    "motion_video", "source_video", "mask_image",
)  # fmt: skip
ASSET_LIST_FIELDS = ("reference_images", "reference_videos", "reference_audios", "element_images")
ASSET_ID_PREFIX = "asset_"

"""Request and response schemas: the spec's tables plus the wire contract's names.

The request models are the first gate of a submit (types, bounds, unknown properties -> 422
``extra_forbidden``) and what ``/openapi.json`` describes; model-specific rules (modes, tiers,
allowed values, reference counts, asset kinds) are checked next by
:func:`mediagen_sandbox.catalog.validate_submit`. The response models only document the
responses: handlers return pre-serialized JSON for speed.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from . import limits
from .config import GENERATION_ERROR_CODES

IdempotencyKey = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^\S+$")]
AssetId = Annotated[
    str,
    Field(max_length=limits.NAME_CHARS, description="An asset id (upload or generation output)."),
]
Name = Annotated[str, Field(max_length=limits.NAME_CHARS)]
Prompt = Annotated[str, Field(max_length=limits.PROMPT_CHARS)]
ShortPrompt = Annotated[str, Field(max_length=limits.NEGATIVE_PROMPT_CHARS)]
SpeechText = Annotated[str, Field(max_length=limits.SPEECH_TEXT_CHARS)]
Unit = Annotated[float, Field(ge=0, le=1)]


def _items(**extra: Any) -> Any:
    """An optional array of at most ``limits.LIST_ITEMS`` entries."""
    return Field(default=None, max_length=limits.LIST_ITEMS, **extra)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class _Open(BaseModel):
    """Objects the catalog lets carry keys of their own (kept, not checked)."""

    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)


class Keyframe(_Strict):
    image: AssetId
    frame_index: int = Field(ge=0, le=int(limits.DURATION_SECONDS) * 60)


class ShotPrompt(_Strict):
    prompt: Prompt
    duration: float = Field(gt=0, le=limits.DURATION_SECONDS)


class Element(_Open):
    name: Name | None = None
    images: list[AssetId] | None = _items()


class ReferenceNames(_Strict):
    reference_images: list[Name] | None = _items()
    reference_videos: list[Name] | None = _items()
    reference_audios: list[Name] | None = _items()


class ImageReferenceNames(_Strict):
    reference_images: list[Name] | None = _items()


class Segment(_Strict):
    voice_name: Name
    text: SpeechText


class CompositionSection(_Open):
    name: Name | None = None
    duration_seconds: float = Field(gt=0, le=600)
    lines: list[Prompt] | None = _items()


class CompositionPlan(_Open):
    sections: list[CompositionSection] = Field(max_length=limits.LIST_ITEMS)


class VideoRequest(_Strict):
    """Body of ``POST /v1/videos``."""

    model: Name | None = None
    prompt: Prompt = ""
    negative_prompt: ShortPrompt | None = None
    mode: Name | None = None
    tier: Name | None = None
    variant: str | None = Field(default=None, max_length=limits.VARIANT_CHARS)
    quality: Name | None = None
    aspect_ratio: Name | None = None
    duration_seconds: int | None = Field(default=None, le=int(limits.DURATION_SECONDS))
    resolution: Literal["480p", "580p", "720p"] | None = None
    frames_per_second: int | None = Field(default=None, ge=4, le=60)
    num_frames: int | None = Field(default=None, ge=40, le=120, multiple_of=4)
    generate_audio: bool | None = None
    keep_audio: bool | None = None
    keep_original_sound: bool = False
    cfg_scale: float | None = Field(default=None, ge=0, le=1)
    shot_type: Literal["customize", "intelligent"] | None = None
    multi_prompt: list[ShotPrompt] | None = _items()
    elements: list[Element] | None = _items()
    first_frame: AssetId | None = None
    last_frame: AssetId | None = None
    keyframes: list[Keyframe] | None = _items()
    reference_image: AssetId | None = None
    reference_images: list[AssetId] | None = _items()
    reference_videos: list[AssetId] | None = _items()
    reference_audios: list[AssetId] | None = _items()
    reference_names: ReferenceNames | None = None
    element_images: list[AssetId] | None = _items()
    audio: AssetId | None = None
    audio_duration_seconds: float | None = Field(default=None, gt=0, le=limits.DURATION_SECONDS)
    face_image: AssetId | None = None
    character_image: AssetId | None = None
    motion_video: AssetId | None = None
    character_id: int = Field(default=0, ge=0, le=10)
    character_orientation: Literal["image", "video"] = "image"
    source_video: AssetId | None = None
    source_generation_id: Name | None = None
    previous_interaction_id: str | None = Field(
        default=None, max_length=limits.INTERACTION_ID_CHARS
    )
    project_id: Name | None = None
    enhancement_model: str | None = Field(default=None, max_length=limits.VARIANT_CHARS)
    compression: Unit | None = None
    grain: float | None = Field(default=None, ge=0, le=0.1)
    halo: Unit | None = None
    noise: Unit | None = None
    recover_detail: Unit | None = None
    softness: float | None = Field(default=None, ge=1, le=5)
    idempotency_key: IdempotencyKey | None = None


class ImageRequest(_Strict):
    """Body of ``POST /v1/images``."""

    prompt: Prompt = ""
    model: Name | None = None
    aspect_ratio: Name | None = None
    generate_image_count: int | None = Field(default=None, ge=1, le=limits.COUNT)
    reference_images: list[AssetId] | None = _items()
    idempotency_key: IdempotencyKey | None = None
    image_size: (
        Literal[
            "square",
            "square_hd",
            "portrait_4_3",
            "portrait_16_9",
            "landscape_4_3",
            "landscape_16_9",
        ]
        | None
    ) = None
    size: str | None = Field(default=None, max_length=11, pattern=r"^[0-9]{1,5}x[0-9]{1,5}$")
    background: Literal["transparent", "opaque", "auto"] | None = None
    quality: Name | None = None
    resolution: Name | None = None
    mask_image: AssetId | None = None
    moderation: Literal["auto", "low"] | None = None
    negative_prompt: ShortPrompt | None = None
    output_format: Literal["png", "webp", "jpeg"] | None = None
    project_id: Name | None = None
    reference_names: ImageReferenceNames | None = None
    response_format: Literal["url", "b64_json"] | None = None


class AudioRequest(_Strict):
    """Body of ``POST /v1/audio`` (speech or music: the model decides)."""

    model: Name | None = None
    text: SpeechText | None = None
    voice_name: Name | None = None
    segments: list[Segment] | None = _items()
    prompt: ShortPrompt | None = None
    prompt_tags: list[Name] | None = _items()
    composition_plan: CompositionPlan | None = None
    lyrics: Prompt | None = None
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)
    sample_count: int | None = Field(default=None, ge=1, le=4)
    idempotency_key: IdempotencyKey | None = None
    bpm: int | None = Field(default=None, ge=60, le=200)
    duration_seconds: float | None = Field(default=None, ge=3, le=600)
    energy: Literal["low", "medium", "high"] | None = None
    tempo: Literal["slow", "medium", "fast"] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    instrumental: bool | None = None
    language: Name | None = None
    text_normalization: Literal["on", "off", "auto"] | None = None
    output_format: Literal["mp3_44100_128", "mp3_44100_192", "wav_44100", "wav_24000"] | None = None
    stability: Unit | None = None
    similarity_boost: Unit | None = None
    style: Unit | None = None
    speed: float | None = Field(default=None, ge=0.7, le=1.3)
    previous_text: SpeechText | None = None
    next_text: SpeechText | None = None
    previous_generation_ids: list[Name] | None = _items()
    next_generation_ids: list[Name] | None = _items()
    previous_request_ids: list[Name] | None = _items()
    next_request_ids: list[Name] | None = _items()
    pronunciation_dictionary_ids: list[Name] | None = _items()
    voice_profile_id: Name | None = None
    voice_embedding_id: Name | None = None
    model_size: Literal["small", "large"] | None = None
    content_preset: Literal["podcast", "audiobook", "advert", "game"] | None = None
    project_id: Name | None = None
    negative_prompt: ShortPrompt | None = None


REQUEST_MODELS: dict[str, type[BaseModel]] = {
    "video": VideoRequest,
    "image": ImageRequest,
    "audio": AudioRequest,
}


# -- responses (documentation only) ---------------------------------------------------------


class GenerationError(BaseModel):
    code: Literal[GENERATION_ERROR_CODES]  # the spec's nine GenerationError codes
    message: str


class GenerationOutput(BaseModel):
    url: str
    asset_id: str | None = None
    content_type: str | None = None
    duration_seconds: float | None = None
    width: int | None = None
    height: int | None = None
    filename: str | None = None
    b64_json: str | None = None


class Generation(BaseModel):
    id: str
    type: Literal["image", "video", "audio"]
    status: Literal["pending", "completed", "failed"]
    model: str
    prompt: str
    created_at: str
    completed_at: str | None = None
    credits_charged: float | None = None
    error: GenerationError | None = None
    idempotency_key: str | None = None
    outputs: list[GenerationOutput] = []
    mode: str | None = None
    result_meta: dict[str, Any] | None = None


class GenerationPage(BaseModel):
    data: list[Generation]
    next_cursor: str | None
    has_more: bool


class ModelList(BaseModel):
    data: list[dict[str, Any]]


class Estimate(BaseModel):
    allowed: bool
    balance: float
    can_afford: bool
    credits: float
    credits_after_discount: float
    model: str
    billable_duration_seconds: float | None
    discount_percent: float
    reason: str | None


class MemberLimit(BaseModel):
    limit: float
    used: float
    remaining: float
    resets_at: str


class Credits(BaseModel):
    balance: float
    organization_balance: float
    reserved: float
    plan: str
    discount_percent: float
    member_limit: MemberLimit | None = None


UploadContentType = Literal[
    "image/png",
    "image/jpeg",
    "image/webp",
    "video/mp4",
    "video/webm",
    "audio/mpeg",
    "audio/wav",
    "audio/mp4",
    "audio/ogg",
]


class UploadRequest(_Strict):
    filename: str = Field(min_length=1, max_length=255)
    content_type: UploadContentType
    size_bytes: int = Field(ge=1)


class UploadTicket(BaseModel):
    asset_id: str
    upload_url: str
    required_headers: dict[str, str]
    expires_at: str
    media_type: Literal["image", "video", "audio"]
    status: Literal["pending", "ready"]


class UploadDone(BaseModel):
    asset_id: str
    status: Literal["ready"]
    size_bytes: int

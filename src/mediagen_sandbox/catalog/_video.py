"""The video models: text-, image- and reference-driven generation, extension, a flat-priced
edit, motion control, an audio-driven avatar, enhancement, multi-shot, keyframes, and a family
priced by frame count and frame rate."""

from __future__ import annotations

import uuid

from ..media.spec import OutputSpec
from ._model import (
    ASSET_PLACEHOLDER_PREFIX as ASSET,
    GENERATION_PLACEHOLDER,
    Ctx,
    ModelDef,
    build_entry,
    mode,
)
from ._outputs import aspect_dims, caption, even, fit_even, seed_of
from ._types import detail

FPS = 24
TIERS = [
    {"id": "720p", "width": 1280, "height": 720},
    {"id": "1080p", "width": 1920, "height": 1080},
]
TIER_SIZE = {t["id"]: (t["width"], t["height"]) for t in TIERS}
ASPECTS = ["16:9", "9:16", "1:1"]
AUDIO_MULTIPLIER = {"generate_audio": {"true": 1.5}}
# The billable seconds of most video modes: the duration_seconds the request asks for.
BY_DURATION = {"duration": [{"field": "duration_seconds"}], "duration_query": "duration_seconds"}
# What an estimate that names no input file prices for models whose length comes from that
# file (the estimate reports it as billable_duration_seconds).
QUOTE_SECONDS = 10
CUSTOM_SHOTS = {"shot_type": "customize"}


def inputs_of(ctx: Ctx) -> dict[str, str]:
    """Local paths of every input asset, keyed by field (lists as ``field[i]``)."""
    out: dict[str, str] = {}
    for name, value in ctx.assets.items():
        refs = value if isinstance(value, list) else [value]
        for i, ref in enumerate(refs):
            if ref.path:
                out[name if not isinstance(value, list) else f"{name}[{i}]"] = ref.path
    for index, ref in sorted(ctx.keyframes, key=lambda item: item[0]):
        if ref.path:
            out.setdefault("first_frame" if index == 0 else f"keyframes[{index}]", ref.path)
    for source in (ctx.source, ctx.previous):
        if source is not None and source.output_paths:
            out["source_generation"] = source.output_paths[0]
    return out


def video(ctx: Ctx, size: tuple[int, int], seconds: float, *, audio: bool, fps: int = FPS):
    width, height = size
    return [
        OutputSpec(
            media="video",
            content_type="video/mp4",
            width=even(width),
            height=even(height),
            duration_seconds=round(float(seconds), 3),
            fps=fps,
            with_audio=audio,
            text=caption(ctx.values) or ctx.entry["name"],
            seed=seed_of(ctx.values, ctx.entry["id"]),
            inputs=inputs_of(ctx),
        )
    ]


def tier_size(values: dict) -> tuple[int, int]:
    long_side, short_side = TIER_SIZE[values.get("tier") or "720p"]
    return aspect_dims(long_side, short_side, values.get("aspect_ratio"))


def source_size(ctx: Ctx, name: str, box: tuple[int, int] = (1280, 720)) -> tuple[int, int]:
    ref = ctx.asset(name)
    if ref is None or not ref.width or not ref.height:
        return box
    width, height = box if ref.width >= ref.height else box[::-1]
    return fit_even(ref.width, ref.height, width, height)


# --- vidra-2: text, image (first/last frame), references, extension --------------------------


def _vidra_outputs(ctx: Ctx) -> list[OutputSpec]:
    v = ctx.values
    seconds = float(v["duration_seconds"])
    size = tier_size(v)
    if ctx.source is not None:  # the extension continues the source: same frame, longer clip
        size = (ctx.source.width or size[0], ctx.source.height or size[1])
        seconds += float(ctx.source.duration_seconds or 0)
    return video(ctx, size, seconds, audio=bool(v.get("generate_audio")))


_VIDRA_DURATIONS = {"by_tier": {"720p": [5, 10], "1080p": [5]}}
_PROMPT = "A red fox trotting through fresh snow at dawn, cinematic"

VIDRA_2 = ModelDef(
    entry=build_entry(
        id="vidra-2",
        type="video",
        name="Vidra 2",
        description="General video model: text, first/last frame, references, extension.",
        family="vidra",
        plans=["free", "pro", "enterprise"],
        tiers=TIERS,
        modes=[
            mode(
                "text_to_video",
                "Text to video",
                ["prompt"],
                [
                    "negative_prompt",
                    "tier",
                    "duration_seconds",
                    "aspect_ratio",
                    "generate_audio",
                    "cfg_scale",
                    "variant",
                ],
                allowed={
                    "tier": ["720p", "1080p"],
                    "duration_seconds": _VIDRA_DURATIONS,
                    "aspect_ratio": ASPECTS,
                    "variant": ["standard", "fast"],
                },
                defaults={
                    "tier": "720p",
                    "duration_seconds": 5,
                    "aspect_ratio": "16:9",
                    "generate_audio": True,
                    "variant": "standard",
                    "cfg_scale": 0.5,
                },
                price={
                    "unit": "second",
                    "by": "tier|variant",
                    "table": {
                        "720p|standard": 4,
                        "720p|fast": 2,
                        "1080p|standard": 8,
                        "1080p|fast": 4,
                    },
                    "multipliers": AUDIO_MULTIPLIER,
                    **BY_DURATION,
                },
                example={
                    "model": "vidra-2",
                    "mode": "text_to_video",
                    "prompt": _PROMPT,
                    "tier": "720p",
                    "duration_seconds": 5,
                },
            ),
            mode(
                "image_to_video",
                "Image to video (first and last frame)",
                ["first_frame"],
                [
                    "prompt",
                    "last_frame",
                    "negative_prompt",
                    "tier",
                    "duration_seconds",
                    "generate_audio",
                    "cfg_scale",
                ],
                allowed={"tier": ["720p", "1080p"], "duration_seconds": _VIDRA_DURATIONS},
                defaults={"tier": "720p", "duration_seconds": 5, "generate_audio": True},
                price={
                    "unit": "second",
                    "by": "tier",
                    "table": {"720p": 4, "1080p": 8},
                    "multipliers": AUDIO_MULTIPLIER,
                    **BY_DURATION,
                    "per_input": {"first_frame": 2, "last_frame": 2},
                },
                example={
                    "model": "vidra-2",
                    "mode": "image_to_video",
                    "first_frame": ASSET + "image",
                    "prompt": "The scene slowly comes alive",
                },
            ),
            mode(
                "reference_to_video",
                "References to video",
                ["prompt", "reference_images"],
                [
                    "reference_videos",
                    "reference_audios",
                    "reference_names",
                    "elements",
                    "negative_prompt",
                    "tier",
                    "duration_seconds",
                    "aspect_ratio",
                    "generate_audio",
                    "keep_original_sound",
                ],
                allowed={
                    "tier": ["720p", "1080p"],
                    "duration_seconds": _VIDRA_DURATIONS,
                    "aspect_ratio": ASPECTS,
                },
                defaults={
                    "tier": "720p",
                    "duration_seconds": 5,
                    "aspect_ratio": "16:9",
                    "generate_audio": True,
                },
                max_counts={
                    "reference_images": 3,
                    "reference_videos": 1,
                    "reference_audios": 1,
                    "elements": 3,
                },
                price={
                    "unit": "second",
                    "by": "tier",
                    "table": {"720p": 5, "1080p": 10},
                    "multipliers": AUDIO_MULTIPLIER,
                    **BY_DURATION,
                    "per_input": {"reference_images": 1},
                },
                example={
                    "model": "vidra-2",
                    "mode": "reference_to_video",
                    "prompt": "@hero walks along a quiet beach",
                    "reference_images": [ASSET + "image"],
                    "reference_names": {"reference_images": ["hero"]},
                },
            ),
            mode(
                "extend",
                "Extend a video",
                ["source_generation_id"],
                ["prompt", "duration_seconds", "generate_audio"],
                allowed={"duration_seconds": [5]},
                defaults={"duration_seconds": 5, "generate_audio": False},
                price={
                    "unit": "second",
                    "credits": 4,
                    "multipliers": AUDIO_MULTIPLIER,
                    **BY_DURATION,
                },
                example={
                    "model": "vidra-2",
                    "mode": "extend",
                    "source_generation_id": GENERATION_PLACEHOLDER,
                    "prompt": "The camera keeps moving forward",
                },
            ),
        ],
    ),
    outputs=_vidra_outputs,
)

# --- vidra-edit: one flat-priced mode ---------------------------------------------------------


def _edit_outputs(ctx: Ctx) -> list[OutputSpec]:
    seconds = ctx.asset_seconds("source_video") or 5.0
    return video(ctx, source_size(ctx, "source_video"), seconds, audio=False)


VIDRA_EDIT = ModelDef(
    entry=build_entry(
        id="vidra-edit",
        type="video",
        name="Vidra Edit",
        description="Restyles or edits a video from a prompt. Flat price per generation.",
        family="vidra",
        modes=[
            mode(
                "default",
                "Edit",
                ["prompt", "source_video"],
                [],
                price={"unit": "generation", "credits": 20},
                example={
                    "model": "vidra-edit",
                    "prompt": "Make it look like a watercolor",
                    "source_video": ASSET + "video",
                },
            )
        ],
    ),
    outputs=_edit_outputs,
)

# --- motionmax: motion control ----------------------------------------------------------------


def _motion_outputs(ctx: Ctx) -> list[OutputSpec]:
    size = source_size(ctx, "character_image")
    audio = bool(ctx.values.get("keep_original_sound"))
    return video(ctx, size, float(ctx.values["duration_seconds"]), audio=audio)


def _motion_check(ctx: Ctx) -> None:
    motion = ctx.asset_seconds("motion_video")
    wanted = ctx.values["duration_seconds"]
    if motion is not None and wanted > motion + 0.05:
        ctx.errors.append(
            detail(
                "duration_seconds",
                f"longer than the motion video ({motion:g} s); at most {int(motion + 0.05)}",
                "less_than_equal",
            )
        )


MOTIONMAX = ModelDef(
    entry=build_entry(
        id="motionmax",
        type="video",
        name="MotionMax",
        description="Transfers the motion of a video onto the character of an image.",
        family="motionmax",
        modes=[
            mode(
                "default",
                "Motion control",
                ["character_image", "motion_video"],
                [
                    "prompt",
                    "character_id",
                    "character_orientation",
                    "keep_original_sound",
                    "quality",
                    "duration_seconds",
                ],
                allowed={"quality": ["std", "pro"]},
                defaults={
                    "quality": "std",
                    "duration_seconds": 5,
                    "character_id": 0,
                    "character_orientation": "image",
                    "keep_original_sound": False,
                },
                ranges={"duration_seconds": {"minimum": 1, "maximum": 30}},
                price={
                    "unit": "second",
                    "by": "quality",
                    "table": {"std": 3, "pro": 6},
                    **BY_DURATION,
                },
                example={
                    "model": "motionmax",
                    "character_image": ASSET + "image",
                    "motion_video": ASSET + "video",
                    "duration_seconds": 1,
                },
            )
        ],
        rules=[
            {
                "kind": "max_duration",
                "field": "duration_seconds",
                "when": {"character_orientation": "image"},
                "maximum": 10,
            },
            {
                "kind": "max_duration",
                "field": "duration_seconds",
                "when": {"character_orientation": "video"},
                "maximum": 30,
            },
        ],
    ),
    outputs=_motion_outputs,
    check=_motion_check,
)

# --- talkhead: audio-driven avatar, priced per second of audio --------------------------------


def _talk_check(ctx: Ctx) -> None:
    audio = ctx.asset_seconds("audio")
    wanted = ctx.values.get("audio_duration_seconds")
    if audio is not None and wanted is not None and wanted > audio + 0.05:
        ctx.errors.append(
            detail(
                "audio_duration_seconds",
                f"longer than the audio asset ({audio:g} s)",
                "less_than_equal",
            )
        )
    seconds = ctx.seconds() or 0
    if seconds > 60:
        ctx.errors.append(
            detail("audio", f"at most 60 s of audio is animated; got {seconds:g} s", "too_long")
        )


def _talk_outputs(ctx: Ctx) -> list[OutputSpec]:
    side = 720
    size = aspect_dims(side * 16 // 9, side, ctx.values.get("aspect_ratio"))
    if ctx.values.get("aspect_ratio") == "1:1":
        size = (side, side)
    return video(ctx, size, ctx.seconds() or 1.0, audio=True)


TALKHEAD = ModelDef(
    entry=build_entry(
        id="talkhead",
        type="video",
        name="TalkHead",
        description="Animates a face to speak or sing an audio track (priced per audio second).",
        family="talkhead",
        modes=[
            mode(
                "default",
                "Audio-driven avatar",
                ["face_image", "audio"],
                ["prompt", "audio_duration_seconds", "aspect_ratio"],
                allowed={"aspect_ratio": ASPECTS},
                defaults={"aspect_ratio": "1:1"},
                ranges={"audio_duration_seconds": {"minimum": 1, "maximum": 60}},
                price={
                    "unit": "second",
                    "credits": 3,
                    "duration_from": "audio",
                    "duration": [
                        {"field": "audio_duration_seconds"},
                        {"asset": "audio"},
                        {"default": QUOTE_SECONDS},
                    ],
                    "duration_query": "audio_duration_seconds",
                },
                example={
                    "model": "talkhead",
                    "face_image": ASSET + "image",
                    "audio": ASSET + "audio",
                },
            )
        ],
    ),
    outputs=_talk_outputs,
    check=_talk_check,
)

# --- upscale-pro: enhancement (plans pro and enterprise) --------------------------------------


def _upscale_outputs(ctx: Ctx) -> list[OutputSpec]:
    size = source_size(ctx, "source_video", TIER_SIZE[ctx.values["tier"]])
    seconds = ctx.asset_seconds("source_video") or 1.0
    return video(ctx, size, seconds, audio=bool(ctx.values.get("keep_audio")))


UPSCALE_PRO = ModelDef(
    entry=build_entry(
        id="upscale-pro",
        type="video",
        name="Upscale Pro",
        description="Enhances and upscales a video (priced per second of the source).",
        family="upscale",
        plans=["pro", "enterprise"],
        tiers=TIERS,
        modes=[
            mode(
                "default",
                "Enhance",
                ["source_video"],
                [
                    "tier",
                    "enhancement_model",
                    "compression",
                    "grain",
                    "halo",
                    "noise",
                    "recover_detail",
                    "softness",
                    "keep_audio",
                ],
                allowed={
                    "tier": ["720p", "1080p"],
                    "enhancement_model": ["proteus", "artemis", "gaia"],
                },
                defaults={"tier": "1080p", "enhancement_model": "proteus", "keep_audio": True},
                price={
                    "unit": "second",
                    "by": "tier",
                    "table": {"720p": 1, "1080p": 2},
                    "multipliers": {"enhancement_model": {"gaia": 1.5}},
                    "duration_from": "source_video",
                    "duration": [{"asset": "source_video"}, {"default": QUOTE_SECONDS}],
                },
                example={
                    "model": "upscale-pro",
                    "source_video": ASSET + "video",
                    "tier": "1080p",
                    "noise": 0.3,
                },
            )
        ],
    ),
    outputs=_upscale_outputs,
)

# --- storyshot: multi-shot and keyframes ------------------------------------------------------


def _story_check(ctx: Ctx) -> None:
    v, given = ctx.values, ctx.given
    if ctx.mode["id"] == "multi_shot":
        shots = given.get("multi_prompt") or []
        if v.get("shot_type") == "customize":
            if not shots:
                ctx.errors.append(
                    detail("multi_prompt", "shot_type customize needs multi_prompt", "missing")
                )
            if "duration_seconds" in given:
                ctx.errors.append(
                    detail(
                        "duration_seconds",
                        "with shot_type customize the shots' durations make the length",
                        "mutually_exclusive",
                    )
                )
            for i, shot in enumerate(shots):
                if not 1 <= shot.get("duration", 0) <= 10:
                    ctx.errors.append(
                        detail(f"multi_prompt[{i}].duration", "between 1 and 10 s", "out_of_range")
                    )
            total = sum(shot.get("duration", 0) for shot in shots)
            if len(shots) > 6 or total > 30:
                ctx.errors.append(
                    detail("multi_prompt", "at most 6 shots and 30 s in all", "too_long")
                )
        else:
            if shots:
                ctx.errors.append(
                    detail("multi_prompt", "only with shot_type customize", "mutually_exclusive")
                )
            if not given.get("prompt"):
                ctx.errors.append(
                    detail("prompt", "shot_type intelligent needs a prompt", "missing")
                )
    else:
        frames = int(v["duration_seconds"]) * FPS
        seen = set()
        for i, keyframe in enumerate(given.get("keyframes") or []):
            index = keyframe.get("frame_index", 0)
            if index >= frames:
                ctx.errors.append(
                    detail(
                        f"keyframes[{i}].frame_index",
                        f"beyond the last frame ({frames - 1}) of a {v['duration_seconds']} s "
                        f"clip at {FPS} fps",
                        "out_of_range",
                    )
                )
            if index in seen:
                ctx.errors.append(
                    detail(f"keyframes[{i}].frame_index", "two keyframes on one frame", "duplicate")
                )
            seen.add(index)


def _story_outputs(ctx: Ctx) -> list[OutputSpec]:
    seconds = ctx.seconds()
    return video(ctx, tier_size(ctx.values), seconds, audio=bool(ctx.values.get("generate_audio")))


STORYSHOT = ModelDef(
    entry=build_entry(
        id="storyshot",
        type="video",
        name="StoryShot",
        description="Multi-shot stories from one prompt or a shot list, and keyframe control.",
        family="storyshot",
        tiers=TIERS,
        modes=[
            mode(
                "multi_shot",
                "Multi-shot",
                ["shot_type"],
                [
                    "prompt",
                    "multi_prompt",
                    "elements",
                    "negative_prompt",
                    "tier",
                    "aspect_ratio",
                    "duration_seconds",
                    "generate_audio",
                ],
                allowed={
                    "tier": ["720p", "1080p"],
                    "aspect_ratio": ASPECTS,
                    "duration_seconds": [10, 15, 20],
                },
                defaults={
                    "tier": "720p",
                    "aspect_ratio": "16:9",
                    "duration_seconds": 10,
                    "generate_audio": False,
                },
                max_counts={"elements": 3, "multi_prompt": 6},
                price={
                    "unit": "second",
                    "by": "tier",
                    "table": {"720p": 6, "1080p": 10},
                    "multipliers": {"generate_audio": {"true": 1.25}},
                    # a customized shot list makes the length; otherwise duration_seconds
                    "duration": [
                        {"sum": "multi_prompt", "of": "duration", "when": CUSTOM_SHOTS},
                        {"field": "duration_seconds"},
                    ],
                },
                example={
                    "model": "storyshot",
                    "mode": "multi_shot",
                    "shot_type": "customize",
                    "multi_prompt": [
                        {"prompt": "A lighthouse at dusk, wide shot", "duration": 3},
                        {"prompt": "The lamp turns on, close-up", "duration": 2},
                    ],
                },
            ),
            mode(
                "keyframes",
                "Keyframes",
                ["prompt", "keyframes"],
                ["reference_image", "negative_prompt", "tier", "aspect_ratio", "duration_seconds"],
                allowed={
                    "tier": ["720p", "1080p"],
                    "aspect_ratio": ASPECTS,
                    "duration_seconds": [5, 10],
                },
                defaults={"tier": "720p", "aspect_ratio": "16:9", "duration_seconds": 5},
                max_counts={"keyframes": 8},
                price={
                    "unit": "second",
                    "by": "tier",
                    "table": {"720p": 6, "1080p": 10},
                    "duration": [{"field": "duration_seconds"}],
                },
                example={
                    "model": "storyshot",
                    "mode": "keyframes",
                    "prompt": "A paper boat drifting down a stream",
                    "keyframes": [
                        {"image": ASSET + "image", "frame_index": 0},
                        {"image": ASSET + "image_2", "frame_index": 96},
                    ],
                },
            ),
        ],
    ),
    outputs=_story_outputs,
    check=_story_check,
)

# --- wave-1: frame count, frame rate, resolution; conversational continuation -----------------

WAVE_HEIGHTS = {"480p": 480, "580p": 580, "720p": 720}


def _wave_check(ctx: Ctx) -> None:
    seconds = ctx.seconds() or 0.0
    if not 2 <= seconds <= 7.5:
        ctx.errors.append(
            detail(
                "num_frames",
                f"num_frames / frames_per_second must be 2 to 7.5 s; "
                f"{ctx.values['num_frames']} / {ctx.values['frames_per_second']} = {seconds:g} s",
                "frame_rate_rule",
            )
        )


def _wave_outputs(ctx: Ctx) -> list[OutputSpec]:
    height = WAVE_HEIGHTS[ctx.values["resolution"]]
    size = aspect_dims(height * 16 // 9, height, ctx.values.get("aspect_ratio"))
    seconds = ctx.seconds() or 0.0
    return video(ctx, size, seconds, audio=False, fps=int(ctx.values["frames_per_second"]))


WAVE_1 = ModelDef(
    entry=build_entry(
        id="wave-1",
        type="video",
        name="Wave 1",
        description="Fast drafts priced by frame count and frame rate; continue a result with "
        "previous_interaction_id.",
        family="wave",
        modes=[
            mode(
                "default",
                "Generate",
                ["prompt"],
                [
                    "negative_prompt",
                    "num_frames",
                    "frames_per_second",
                    "resolution",
                    "aspect_ratio",
                    "first_frame",
                    "element_images",
                    "previous_interaction_id",
                ],
                allowed={
                    "frames_per_second": [16, 24],
                    "aspect_ratio": ASPECTS,
                    "resolution": ["480p", "580p", "720p"],
                },
                defaults={
                    "num_frames": 80,
                    "frames_per_second": 16,
                    "resolution": "480p",
                    "aspect_ratio": "16:9",
                },
                max_counts={"element_images": 4},
                price={
                    "unit": "second",
                    "by": "resolution",
                    "table": {"480p": 1, "580p": 1.5, "720p": 2},
                    "duration": [{"divide": ["num_frames", "frames_per_second"], "round": 3}],
                },
                example={
                    "model": "wave-1",
                    "prompt": "Ocean waves at golden hour",
                    "num_frames": 80,
                    "frames_per_second": 16,
                },
            )
        ],
    ),
    outputs=_wave_outputs,
    check=_wave_check,
    result_meta=lambda ctx: {"interaction_id": "int_" + uuid.uuid4().hex[:20]},
)

MODELS = [VIDRA_2, VIDRA_EDIT, MOTIONMAX, TALKHEAD, UPSCALE_PRO, STORYSHOT, WAVE_1]

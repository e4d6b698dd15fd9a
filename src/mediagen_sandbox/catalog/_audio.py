"""The audio models: speech (one voice or a multi-speaker script) and music (two lengths)."""

from __future__ import annotations

from ..media.spec import OutputSpec
from ._model import Ctx, ModelDef, build_entry, mode
from ._outputs import AUDIO_FORMATS, caption, seed_of
from ._types import detail

# --- voxa-tts: speech, priced per character ---------------------------------------------------

VOICES = [
    {"id": "voice_aria", "name": "Aria", "language": "en", "gender": "female"},
    {"id": "voice_bruno", "name": "Bruno", "language": "en", "gender": "male"},
    {"id": "voice_chloe", "name": "Chloe", "language": "fr", "gender": "female"},
    {"id": "voice_diego", "name": "Diego", "language": "es", "gender": "male"},
    {"id": "voice_greta", "name": "Greta", "language": "de", "gender": "female"},
]
LANGUAGES = ["en", "fr", "es", "de", "it", "pt"]


def voice_of(name: object) -> dict | None:
    for voice in VOICES:
        if isinstance(name, str) and name.lower() in (voice["id"], voice["name"].lower()):
            return voice
    return None


def _known_voices() -> str:
    return ", ".join(f"{v['name']} ({v['id']})" for v in VOICES)


def _speech_check(ctx: Ctx) -> None:
    names = [("voice_name", ctx.values.get("voice_name"))]
    names += [
        (f"segments[{i}].voice_name", s.get("voice_name"))
        for i, s in enumerate(ctx.given.get("segments") or [])
    ]
    for loc, name in names:
        if voice_of(name) is None:
            ctx.errors.append(
                detail(loc, f"unknown voice {name!r}; voices: {_known_voices()}", "unknown_voice")
            )
    for i, segment in enumerate(ctx.given.get("segments") or []):
        if not (segment.get("text") or "").strip():
            ctx.errors.append(detail(f"segments[{i}].text", "empty text", "missing"))
    if "text" in ctx.given and not ctx.given["text"].strip():
        ctx.errors.append(detail("text", "empty text", "missing"))
    # A cloned voice the "provider" does not know: valid in shape, so the job fails instead.
    embedding = ctx.values.get("voice_embedding_id")
    if embedding is not None and not str(embedding).startswith("emb_"):
        ctx.planned_failure = (
            "invalid_voice",
            f"The voice embedding {embedding!r} is unknown to the voice provider.",
        )


def _speech_outputs(ctx: Ctx) -> list[OutputSpec]:
    v = ctx.values
    content_type, rate, bitrate = AUDIO_FORMATS[v["output_format"]]
    voice = voice_of(v.get("voice_name")) or VOICES[0]
    segments = tuple(
        ((voice_of(s["voice_name"]) or voice)["id"], s["text"]) for s in v.get("segments") or []
    )
    return [
        OutputSpec(
            media="audio",
            content_type=content_type,
            audio_kind="speech",
            text=v.get("text") or "",
            voice=voice["id"],
            segments=segments,
            speed=float(v.get("speed") or 1.0),
            language=v.get("language") or voice["language"],
            sample_rate=rate,
            bitrate_kbps=bitrate,
            seed=seed_of(v),
        )
    ]


VOXA_TTS = ModelDef(
    entry=build_entry(
        id="voxa-tts",
        type="audio",
        audio_kind="speech",
        name="Voxa TTS",
        description="Speech in one voice, or a multi-speaker script as one file. Per character.",
        family="voxa",
        voices=VOICES,
        modes=[
            mode(
                "default",
                "Speech",
                [],
                [
                    "text",
                    "segments",
                    "voice_name",
                    "language",
                    "text_normalization",
                    "output_format",
                    "stability",
                    "similarity_boost",
                    "style",
                    "speed",
                    "previous_text",
                    "next_text",
                    "previous_generation_ids",
                    "next_generation_ids",
                    "previous_request_ids",
                    "next_request_ids",
                    "pronunciation_dictionary_ids",
                    "voice_profile_id",
                    "voice_embedding_id",
                    "model_size",
                    "content_preset",
                ],
                allowed={"language": LANGUAGES, "model_size": ["small", "large"]},
                defaults={
                    "voice_name": "Aria",
                    "model_size": "small",
                    "speed": 1.0,
                    "output_format": "mp3_44100_128",
                    "text_normalization": "auto",
                },
                ranges={"speed": {"minimum": 0.7, "maximum": 1.2}},
                max_counts={"segments": 20},
                price={
                    "unit": "character",
                    "by": "model_size",
                    "table": {"small": 0.02, "large": 0.04},
                    "characters": ["text", "segments[].text"],
                },
                example={
                    "model": "voxa-tts",
                    "text": "Welcome to the studio. Let's make something.",
                    "voice_name": "Aria",
                },
            )
        ],
        rules=[
            {"kind": "mutually_exclusive", "fields": ["text", "segments"]},
            {"kind": "one_of_required", "fields": ["text", "segments"]},
        ],
    ),
    outputs=_speech_outputs,
    check=_speech_check,
)

# --- tunesmith / tunesmith-long: music, priced per second -------------------------------------


# A composition plan's sections make the length; without one, duration_seconds does.
MUSIC_DURATION = {
    "duration": [
        {"sum": "composition_plan.sections", "of": "duration_seconds"},
        {"field": "duration_seconds"},
    ],
    "duration_query": "duration_seconds",
}


def _music_check(ctx: Ctx) -> None:
    v = ctx.values
    bounds = ctx.mode["ranges"]["duration_seconds"]
    plan = ctx.given.get("composition_plan")
    if plan is not None:
        seconds = ctx.seconds() or 0.0
        if not bounds["minimum"] <= seconds <= bounds["maximum"]:
            ctx.errors.append(
                detail(
                    "composition_plan.sections",
                    f"the sections last {seconds:g} s; {ctx.entry['id']} makes "
                    f"{bounds['minimum']} to {bounds['maximum']} s",
                    "out_of_range",
                )
            )
    if "seed" in ctx.given and (v.get("sample_count") or 1) > 1:
        ctx.errors.append(
            detail("seed", "cannot be combined with sample_count above 1", "mutually_exclusive")
        )
    if v.get("lyrics") and v.get("instrumental"):
        ctx.errors.append(
            detail("lyrics", "cannot be combined with instrumental=true", "mutually_exclusive")
        )


def _music_outputs(ctx: Ctx) -> list[OutputSpec]:
    v = ctx.values
    content_type, rate, bitrate = AUDIO_FORMATS[v["output_format"]]
    title = caption(v) or ", ".join(v.get("prompt_tags") or []) or ctx.entry["name"]
    return [
        OutputSpec(
            media="audio",
            content_type=content_type,
            audio_kind="music",
            duration_seconds=ctx.seconds(),
            text=title,
            bpm=v.get("bpm"),
            seed=seed_of(v, f"#{i}") if "seed" not in ctx.given else seed_of(v),
            sample_rate=rate,
            bitrate_kbps=bitrate,
        )
        for i in range(int(v.get("sample_count") or 1))
    ]


MUSIC_OPTIONAL = [
    "bpm",
    "energy",
    "tempo",
    "temperature",
    "instrumental",
    "negative_prompt",
    "output_format",
    "seed",
    "duration_seconds",
]
MUSIC_RULES = [
    {"kind": "mutually_exclusive", "fields": ["prompt", "composition_plan"]},
    {"kind": "mutually_exclusive", "fields": ["composition_plan", "duration_seconds"]},
]

TUNESMITH = ModelDef(
    entry=build_entry(
        id="tunesmith",
        type="audio",
        audio_kind="music",
        name="Tunesmith",
        description="Short music from a prompt, style tags or a composition plan; several "
        "alternatives per request.",
        family="tunesmith",
        modes=[
            mode(
                "default",
                "Music",
                [],
                ["prompt", "prompt_tags", "composition_plan", "sample_count", *MUSIC_OPTIONAL],
                defaults={
                    "duration_seconds": 10,
                    "sample_count": 1,
                    "output_format": "mp3_44100_128",
                },
                ranges={"duration_seconds": {"minimum": 5, "maximum": 30}},
                price={
                    "unit": "second",
                    "credits": 0.5,
                    "multipliers": {"sample_count": {"1": 1, "2": 2, "3": 3, "4": 4}},
                    "count": "sample_count",
                    **MUSIC_DURATION,
                },
                example={
                    "model": "tunesmith",
                    "prompt": "Warm lo-fi beat with soft piano",
                    "duration_seconds": 10,
                },
            )
        ],
        rules=[
            {"kind": "one_of_required", "fields": ["prompt", "prompt_tags", "composition_plan"]},
            {"kind": "mutually_exclusive", "fields": ["prompt_tags", "composition_plan"]},
            *MUSIC_RULES,
        ],
    ),
    outputs=_music_outputs,
    check=_music_check,
)

TUNESMITH_LONG = ModelDef(
    entry=build_entry(
        id="tunesmith-long",
        type="audio",
        audio_kind="music",
        name="Tunesmith Long",
        description="Full-length songs up to five minutes, with sung lyrics.",
        family="tunesmith",
        modes=[
            mode(
                "default",
                "Song",
                [],
                ["prompt", "composition_plan", "lyrics", *MUSIC_OPTIONAL],
                defaults={"duration_seconds": 60, "output_format": "mp3_44100_128"},
                ranges={"duration_seconds": {"minimum": 10, "maximum": 300}},
                price={"unit": "second", "credits": 0.3, **MUSIC_DURATION},
                example={
                    "model": "tunesmith-long",
                    "prompt": "An upbeat indie pop song",
                    "lyrics": "Sunny days are here again",
                    "duration_seconds": 30,
                },
            )
        ],
        rules=[
            {"kind": "one_of_required", "fields": ["prompt", "composition_plan"]},
            *MUSIC_RULES,
        ],
    ),
    outputs=_music_outputs,
    check=_music_check,
)

MODELS = [VOXA_TTS, TUNESMITH, TUNESMITH_LONG]

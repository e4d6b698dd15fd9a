"""What the job runner asks a renderer for, and what it gets back.

Validation (`mediagen_sandbox.catalog`) turns a request into `OutputSpec`s; the job runner
hands each to `mediagen_sandbox.media.render` in a worker process (so the specs are plain,
picklable dataclasses) and records the returned `RenderedOutput` as a generation output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

MediaKind = Literal["image", "video", "audio"]


@dataclass(frozen=True)
class OutputSpec:
    media: MediaKind
    content_type: str  # image/png|image/webp|image/jpeg|video/mp4|audio/mpeg|audio/wav
    width: int | None = None  # images and video (even numbers for video)
    height: int | None = None
    duration_seconds: float | None = None  # video and music; speech: None (the text decides)
    fps: int = 24  # video
    with_audio: bool = False  # video: an AAC track
    text: str = ""  # drawn on images/frames; spoken for speech; a title for music
    seed: int = 0
    transparent: bool = False  # images: RGBA background (png/webp only)
    audio_kind: Literal["speech", "music"] | None = None
    voice: str | None = None  # speech: voice id from the catalog's "voices"
    segments: tuple[tuple[str, str], ...] = ()  # speech: (voice, text) pairs, one file
    speed: float = 1.0  # speech rate multiplier
    bpm: int | None = None  # music
    # Local paths of input assets the output derives from, keyed by request field
    # (e.g. {"first_frame": "/data/assets/asset_x.png", "source_video": ".../y.mp4"}).
    inputs: dict[str, str] = field(default_factory=dict)
    # audio encoding (from the request's output_format, e.g. "mp3_44100_128" or "wav_24000");
    # None = the renderer's default (44100 Hz; 128 kbps for MP3)
    sample_rate: int | None = None
    bitrate_kbps: int | None = None
    language: str | None = None  # speech: the voice's language (e.g. "en", "fr"); None = English


# espeak speaks 175 words a minute at speed 1, some 16 characters a second of English text
SPOKEN_CHARACTERS_PER_SECOND = 16.0


def media_seconds(spec: OutputSpec) -> float:
    """How long the media ``spec`` asks for plays: its duration, or for speech what its text
    takes to say (what the renderer's time grows with)."""
    if spec.duration_seconds is not None:
        return float(spec.duration_seconds)
    if spec.media != "audio":
        return 0.0
    characters = sum(len(text) for _, text in spec.segments) or len(spec.text)
    return characters / SPOKEN_CHARACTERS_PER_SECOND / max(spec.speed or 1.0, 0.25)


@dataclass(frozen=True)
class RenderedOutput:
    content_type: str
    size_bytes: int
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None


@dataclass(frozen=True)
class ProbeResult:
    """What an uploaded file turned out to be (raises ValueError when it is not media)."""

    media: MediaKind
    content_type: str
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None

"""Audio outputs: speech (espeak-ng) or music (numpy synthesis), written as MP3 or WAV."""

from __future__ import annotations

from . import music, speech
from .audio import write_audio
from .spec import OutputSpec, RenderedOutput


def _is_speech(spec: OutputSpec) -> bool:
    if spec.audio_kind is not None:
        return spec.audio_kind == "speech"
    return spec.duration_seconds is None  # speech length comes from the text


def render_audio(spec: OutputSpec, dest_path: str) -> RenderedOutput:
    target_rate = spec.sample_rate
    bitrate = spec.bitrate_kbps
    if _is_speech(spec):
        segments = list(spec.segments) or [(spec.voice, spec.text)]
        samples, rate, _real = speech.synthesize(
            segments, speed=spec.speed or 1.0, language=spec.language
        )
        return write_audio(
            dest_path,
            spec.content_type,
            samples,
            rate,
            target_rate=target_rate or 44100,
            bitrate_kbps=bitrate,
        )
    duration = float(spec.duration_seconds or 10.0)
    samples = music.compose(duration, seed=spec.seed, bpm=spec.bpm)
    return write_audio(
        dest_path,
        spec.content_type,
        samples,
        music.RATE,
        target_rate=target_rate,
        bitrate_kbps=bitrate,
    )

"""PCM helpers: encode mono float samples to WAV or MP3 and measure what was written."""

from __future__ import annotations

import os
import wave
from fractions import Fraction

import numpy as np

from .formats import atomic_destination
from .spec import RenderedOutput

DEFAULT_RATE = 44100
_MP3_CHUNK = 1152
MP3_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)


def to_int16(samples: np.ndarray) -> np.ndarray:
    """Float samples in [-1, 1] (mono or (n, channels)) to interleaved little-endian int16."""
    clipped = np.clip(samples, -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2")


def resample(samples: np.ndarray, rate: int, target_rate: int) -> np.ndarray:
    """Linear-interpolation resampling: good enough for synthetic speech and tones."""
    if rate == target_rate or samples.size == 0:
        return samples
    count = round(samples.shape[0] * target_rate / rate)
    positions = np.linspace(0.0, samples.shape[0] - 1, count)
    return np.interp(positions, np.arange(samples.shape[0]), samples).astype(np.float32)


def write_wav(path: str, samples: np.ndarray, rate: int) -> None:
    pcm = to_int16(samples)
    channels = 1 if pcm.ndim == 1 else pcm.shape[1]
    with wave.open(path, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm.tobytes())


def write_mp3(path: str, samples: np.ndarray, rate: int, bitrate_kbps: int = 128) -> None:
    """MP3 through PyAV's libmp3lame, with the LAME/Xing header FFmpeg's muxer writes.

    That header records the encoder delay and padding, so players (FFmpeg, browsers) trim them
    and the decoded length equals ``len(samples)`` exactly: a raw LAME stream would play up to
    ~50 ms longer than asked.
    """
    import av

    pcm = (np.clip(samples, -1.0, 1.0) * 2147483647.0).astype(np.int32)
    with av.open(path, "w", format="mp3") as out:
        stream = out.add_stream("libmp3lame", rate=rate, layout="mono")
        stream.bit_rate = bitrate_kbps * 1000
        for start in range(0, pcm.size, _MP3_CHUNK):
            frame = av.AudioFrame.from_ndarray(
                pcm[None, start : start + _MP3_CHUNK], format="s32p", layout="mono"
            )
            frame.sample_rate = rate
            frame.pts = start
            frame.time_base = Fraction(1, rate)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)


def decoded_duration(path: str) -> float:
    """The duration a player will actually play, from decoding every audio frame."""
    import av

    samples = 0
    rate = 0
    with av.open(path) as container:
        stream = container.streams.audio[0]
        rate = stream.rate or stream.codec_context.sample_rate
        for frame in container.decode(stream):
            samples += frame.samples
    return samples / rate if rate else 0.0


def wav_duration(path: str) -> float:
    with wave.open(path, "rb") as src:
        return src.getnframes() / src.getframerate()


def write_audio(
    dest_path: str,
    content_type: str,
    samples: np.ndarray,
    rate: int,
    *,
    target_rate: int | None = None,
    bitrate_kbps: int | None = None,
) -> RenderedOutput:
    """Encode ``samples`` (float, mono) as WAV or MP3 atomically; report measured values."""
    out_rate = target_rate or rate
    if content_type == "audio/mpeg" and out_rate not in MP3_RATES:
        out_rate = DEFAULT_RATE
    samples = resample(np.asarray(samples, dtype=np.float32), rate, out_rate)
    with atomic_destination(dest_path) as tmp_path:
        if content_type == "audio/wav":
            write_wav(tmp_path, samples, out_rate)
            duration = wav_duration(tmp_path)
        elif content_type == "audio/mpeg":
            write_mp3(tmp_path, samples, out_rate, bitrate_kbps or 128)
            duration = decoded_duration(tmp_path)
        else:
            raise ValueError(f"cannot render audio as {content_type!r}")
    return RenderedOutput(
        content_type=content_type,
        size_bytes=os.path.getsize(dest_path),
        duration_seconds=round(duration, 3),
    )

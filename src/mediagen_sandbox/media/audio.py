"""PCM helpers: encode mono float samples to WAV or MP3 and measure what was written.

Resampling and encoding go a piece at a time (:data:`PIECE` output samples), so an hour of
speech costs the worker a few megabytes beyond its samples instead of gigabytes of
interpolation positions and converted copies.
"""

from __future__ import annotations

import os
import wave
from collections.abc import Iterable, Iterator
from fractions import Fraction

import numpy as np

from .formats import atomic_destination
from .spec import RenderedOutput

DEFAULT_RATE = 44100
PIECE = 1 << 18  # output samples resampled and encoded at a time (about 6 s at 44.1 kHz)
MP3_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)


def to_int16(samples: np.ndarray) -> np.ndarray:
    """Float samples in [-1, 1] (mono or (n, channels)) to interleaved little-endian int16."""
    clipped = np.clip(samples, -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2")


def resampled(samples: np.ndarray, rate: int, target_rate: int) -> Iterator[np.ndarray]:
    """Mono ``samples`` at ``target_rate`` by linear interpolation (good enough for synthetic
    speech and tones), in pieces of at most :data:`PIECE` samples."""
    n = samples.shape[0]
    if rate == target_rate or n == 0:
        for start in range(0, n, PIECE):
            yield samples[start : start + PIECE]
        return
    count = round(n * target_rate / rate)
    step = (n - 1) / (count - 1) if count > 1 else 0.0  # np.linspace(0, n - 1, count)'s
    for start in range(0, count, PIECE):
        positions = np.arange(start, min(start + PIECE, count), dtype=np.float64) * step
        low, high = int(positions[0]), min(n, int(positions[-1]) + 2)
        source = np.arange(low, high, dtype=np.float64)
        yield np.interp(positions, source, samples[low:high]).astype(np.float32)


def resample(samples: np.ndarray, rate: int, target_rate: int) -> np.ndarray:
    """All of :func:`resampled` in one array."""
    if rate == target_rate or samples.size == 0:
        return samples
    return np.concatenate(list(resampled(samples, rate, target_rate)))


def write_wav(path: str, pieces: Iterable[np.ndarray], rate: int) -> None:
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        for piece in pieces:
            out.writeframes(to_int16(piece).tobytes())


def write_mp3(path: str, pieces: Iterable[np.ndarray], rate: int, bitrate_kbps: int = 128) -> None:
    """MP3 through PyAV's libmp3lame, with the LAME/Xing header FFmpeg's muxer writes.

    That header records the encoder delay and padding, so players (FFmpeg, browsers) trim them
    and the decoded length equals the samples' exactly: a raw LAME stream would play up to
    ~50 ms longer than asked. PyAV cuts each piece into the encoder's frames.
    """
    import av

    with av.open(path, "w", format="mp3") as out:
        stream = out.add_stream("libmp3lame", rate=rate, layout="mono")
        stream.bit_rate = bitrate_kbps * 1000
        written = 0
        for piece in pieces:
            if not piece.size:
                continue
            pcm = (np.clip(piece, -1.0, 1.0) * 2147483647.0).astype(np.int32)
            frame = av.AudioFrame.from_ndarray(pcm[None, :], format="s32p", layout="mono")
            frame.sample_rate = rate
            frame.pts = written
            frame.time_base = Fraction(1, rate)
            written += pcm.size
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
    pieces = resampled(np.asarray(samples, dtype=np.float32), rate, out_rate)
    with atomic_destination(dest_path) as tmp_path:
        if content_type == "audio/wav":
            write_wav(tmp_path, pieces, out_rate)
            duration = wav_duration(tmp_path)
        elif content_type == "audio/mpeg":
            write_mp3(tmp_path, pieces, out_rate, bitrate_kbps or 128)
            duration = decoded_duration(tmp_path)
        else:
            raise ValueError(f"cannot render audio as {content_type!r}")
    return RenderedOutput(
        content_type=content_type,
        size_bytes=os.path.getsize(dest_path),
        duration_seconds=round(duration, 3),
    )

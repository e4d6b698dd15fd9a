"""Audio is resampled and encoded a piece at a time: the pieces add up to the one-shot linear
interpolation, a long file comes out whole (its decoded length exact), and writing it costs
far less memory than the samples it is made from."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from mediagen_sandbox.media.audio import (
    PIECE,
    decoded_duration,
    resampled,
    wav_duration,
    write_audio,
)


def _tone(seconds: float, rate: int) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (0.4 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


@pytest.mark.parametrize(
    ("count", "rate", "target"),
    [
        (PIECE * 3 + 17, 22050, 44100),
        (PIECE + 5, 44100, 24000),
        (2 * PIECE, 8000, 8000),
        (1, 22050, 44100),
    ],
)
def test_the_pieces_are_the_one_shot_interpolation(count, rate, target):
    samples = np.random.default_rng(1).uniform(-1, 1, count).astype(np.float32)
    pieces = list(resampled(samples, rate, target))
    assert all(len(p) <= PIECE for p in pieces)
    whole = np.concatenate(pieces)
    n = round(count * target / rate)
    expected = np.interp(np.linspace(0.0, count - 1, n), np.arange(count), samples)
    assert whole.dtype == np.float32
    assert whole.shape == expected.shape
    np.testing.assert_allclose(whole, expected, atol=1e-6)


def test_a_long_mp3_of_many_pieces_plays_exactly_as_long(tmp_path):
    samples = _tone(20.0, 22050)
    out = write_audio(str(tmp_path / "a.mp3"), "audio/mpeg", samples, 22050, target_rate=44100)
    assert 3 * PIECE < 44100 * 20, "several pieces"
    assert decoded_duration(str(tmp_path / "a.mp3")) * 44100 == pytest.approx(44100 * 20)
    assert out.duration_seconds == pytest.approx(20.0, abs=1e-3)


def test_writing_ten_minutes_costs_less_memory_than_its_samples(tmp_path):
    samples = _tone(600.0, 22050)  # ten minutes of speech's rate, float32
    tracemalloc.start()
    try:
        out = write_audio(str(tmp_path / "a.wav"), "audio/wav", samples, 22050, target_rate=44100)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert wav_duration(str(tmp_path / "a.wav")) == pytest.approx(600.0, abs=1e-3)
    assert out.size_bytes > samples.nbytes, "twice the rate in half the bits: the whole file"
    # one-shot: positions, interpolation and conversions of the whole file took 16x the
    # samples; a piece at a time, 0.16x
    assert peak < samples.nbytes / 2, (peak, samples.nbytes)

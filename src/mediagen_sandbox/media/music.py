"""Music: a seeded chord progression with bass and a simple drum pattern, exactly N seconds."""

from __future__ import annotations

import numpy as np

RATE = 44100
DEFAULT_BPM = 100

# Progressions as semitone offsets of chord roots from the key (I-V-vi-IV and friends).
_PROGRESSIONS = ((0, 7, 9, 5), (0, 5, 7, 5), (9, 5, 0, 7), (0, 9, 5, 7))
_MAJOR, _MINOR = (0, 4, 7), (0, 3, 7)


def _chord_intervals(root_offset: int) -> tuple[int, int, int]:
    return _MINOR if root_offset in (2, 4, 9) else _MAJOR


def _tone(freq: float, length: int, harmonics: tuple[float, ...]) -> np.ndarray:
    t = np.arange(length, dtype=np.float32) / RATE
    wave = np.zeros(length, dtype=np.float32)
    for k, amp in enumerate(harmonics, start=1):
        wave += amp * np.sin(2 * np.pi * freq * k * t, dtype=np.float32)
    return wave


def _envelope(length: int, attack: float, release: float) -> np.ndarray:
    env = np.ones(length, dtype=np.float32)
    a = min(length, int(attack * RATE))
    r = min(length - a, int(release * RATE))
    if a:
        env[:a] = np.linspace(0, 1, a, dtype=np.float32)
    if r:
        env[length - r :] = np.linspace(1, 0, r, dtype=np.float32)
    return env


def _kick(length: int) -> np.ndarray:
    t = np.arange(length, dtype=np.float32) / RATE
    freq = 50 + 90 * np.exp(-t * 30)
    return np.sin(2 * np.pi * np.cumsum(freq) / RATE) * np.exp(-t * 9)


def _snare(length: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(length, dtype=np.float32) / RATE
    noise = rng.standard_normal(length).astype(np.float32)
    return 0.5 * noise * np.exp(-t * 22) + 0.3 * np.sin(2 * np.pi * 190 * t) * np.exp(-t * 30)


def _hat(length: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(length, dtype=np.float32) / RATE
    noise = rng.standard_normal(length).astype(np.float32)
    bright = np.diff(noise, prepend=0.0)  # a crude high-pass
    return 0.25 * bright * np.exp(-t * 60)


def _add(track: np.ndarray, sound: np.ndarray, start: int, gain: float) -> None:
    end = min(track.size, start + sound.size)
    if end > start:
        track[start:end] += gain * sound[: end - start]


def compose(duration_seconds: float, seed: int = 0, bpm: int | None = None) -> np.ndarray:
    """Mono float32 samples at ``RATE``, exactly ``round(duration * RATE)`` long."""
    total = max(1, round(duration_seconds * RATE))
    rng = np.random.default_rng(seed)
    bpm = int(bpm or DEFAULT_BPM)
    beat = max(1, round(RATE * 60.0 / max(30, min(300, bpm))))
    bar = 4 * beat
    key_hz = 220.0 * 2 ** (int(rng.integers(0, 12)) / 12)
    progression = _PROGRESSIONS[int(rng.integers(0, len(_PROGRESSIONS)))]
    track = np.zeros(total, dtype=np.float32)

    # one chord per bar: a soft pad plus a bass note on each beat
    chord_cache: dict[int, np.ndarray] = {}
    bass_cache: dict[int, np.ndarray] = {}
    for bar_index, start in enumerate(range(0, total, bar)):
        root = progression[bar_index % len(progression)]
        if root not in chord_cache:
            pad = np.zeros(bar, dtype=np.float32)
            for interval in _chord_intervals(root):
                pad += _tone(key_hz * 2 ** ((root + interval) / 12), bar, (1.0, 0.3, 0.1))
            chord_cache[root] = pad * _envelope(bar, 0.08, 0.25) / 3
            bass_freq = key_hz / 2 * 2 ** (root / 12)
            bass_cache[root] = _tone(bass_freq, beat, (1.0, 0.5)) * _envelope(beat, 0.01, 0.2)
        _add(track, chord_cache[root], start, 0.35)
        for b in range(4):
            _add(track, bass_cache[root], start + b * beat, 0.3)

    # drums: kick on 1 and 3, snare on 2 and 4, hats on eighths
    kick, snare, hat = _kick(beat), _snare(beat // 2, rng), _hat(beat // 4, rng)
    for index, start in enumerate(range(0, total, beat)):
        _add(track, kick if index % 2 == 0 else snare, start, 0.55 if index % 2 == 0 else 0.4)
        _add(track, hat, start, 0.3)
        _add(track, hat, start + beat // 2, 0.2)

    fade = min(total, int(0.05 * RATE))
    track[:fade] *= np.linspace(0, 1, fade, dtype=np.float32)
    track[total - fade :] *= np.linspace(1, 0, fade, dtype=np.float32)
    peak = float(np.max(np.abs(track))) or 1.0
    return (0.8 * track / peak).astype(np.float32)

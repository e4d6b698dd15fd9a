"""Speech: real text-to-speech through the bundled libespeak-ng, with a synthetic fallback.

`espeakng-loader` ships libespeak-ng and its voice data in its wheel; we drive the C API with
ctypes in synchronous mode (no audio device). Each catalog voice id maps to a stable espeak
variant and pitch, so different speakers in a multi-speaker request sound different. If the
library cannot be loaded or synthesis fails, `synthesize` falls back to a tone-based "voice"
so a job never crashes for that reason (the fallback is clearly synthetic).
"""

from __future__ import annotations

import ctypes
import logging
import threading
import zlib
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_PARAM_RATE, _PARAM_VOLUME, _PARAM_PITCH, _PARAM_RANGE = 1, 2, 3, 4
_NORMAL_RATE_WPM = 175
_PAUSE_BETWEEN_SEGMENTS_S = 0.35

# (variant, pitch 0-99): alternating male/female timbres so neighbouring voices differ.
_VOICE_STYLES: tuple[tuple[str, int], ...] = (
    ("m3", 45),
    ("f2", 60),
    ("m1", 38),
    ("f4", 66),
    ("m7", 50),
    ("f1", 55),
    ("m2", 42),
    ("f3", 70),
    ("m5", 35),
    ("f5", 62),
    ("m4", 48),
    ("m6", 40),
)

_SYNTH_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


@dataclass(frozen=True)
class VoiceStyle:
    language: str
    variant: str
    pitch: int


def voice_style(voice: str | None, language: str | None = None) -> VoiceStyle:
    """A stable espeak variant and pitch for a catalog voice id (crc32, not Python's hash)."""
    key = (voice or "default").encode()
    variant, pitch = _VOICE_STYLES[zlib.crc32(key) % len(_VOICE_STYLES)]
    return VoiceStyle(
        language=(language or "en").split("-")[0].lower() or "en", variant=variant, pitch=pitch
    )


class _Espeak:
    """The process-wide libespeak-ng instance (the C library keeps global state)."""

    def __init__(self) -> None:
        import espeakng_loader

        self._lib = ctypes.CDLL(espeakng_loader.get_library_path())
        lib = self._lib
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetSynthCallback.argtypes = [_SYNTH_CALLBACK]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_Synchronize.restype = ctypes.c_int
        data_dir = espeakng_loader.get_data_path().encode()
        self.rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_dir, 0)
        if self.rate <= 0:
            raise RuntimeError(f"espeak_Initialize failed ({self.rate})")
        self._chunks: list[np.ndarray] = []
        self._callback = _SYNTH_CALLBACK(self._collect)  # keep a reference: C holds it
        lib.espeak_SetSynthCallback(self._callback)
        self._lock = threading.Lock()

    def _collect(self, wav, count, _events) -> int:
        if wav and count > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        return 0

    def say(self, text: str, style: VoiceStyle, speed: float) -> np.ndarray:
        """Mono float32 samples at ``self.rate`` for ``text`` in ``style``."""
        lib = self._lib
        with self._lock:
            name = f"{style.language}+{style.variant}".encode()
            if (
                lib.espeak_SetVoiceByName(name) != 0
                and lib.espeak_SetVoiceByName(f"en+{style.variant}".encode()) != 0
            ):
                raise RuntimeError(f"espeak has no voice {name!r}")
            wpm = int(min(450, max(80, round(_NORMAL_RATE_WPM * speed))))
            lib.espeak_SetParameter(_PARAM_RATE, wpm, 0)
            lib.espeak_SetParameter(_PARAM_PITCH, style.pitch, 0)
            lib.espeak_SetParameter(_PARAM_RANGE, 50, 0)
            lib.espeak_SetParameter(_PARAM_VOLUME, 100, 0)
            encoded = text.encode("utf-8") + b"\0"
            self._chunks = []
            err = lib.espeak_Synth(
                encoded, len(encoded), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None
            )
            if err != 0:
                raise RuntimeError(f"espeak_Synth failed ({err})")
            lib.espeak_Synchronize()
            chunks, self._chunks = self._chunks, []
        if not chunks:
            return np.zeros(0, dtype=np.float32)
        return (np.concatenate(chunks).astype(np.float32) / 32768.0).astype(np.float32)


_engine: _Espeak | None = None
_engine_error: str | None = None
_engine_lock = threading.Lock()


def _get_engine() -> _Espeak | None:
    global _engine, _engine_error
    with _engine_lock:
        if _engine is None and _engine_error is None:
            try:
                _engine = _Espeak()
            except Exception as exc:
                _engine_error = f"{type(exc).__name__}: {exc}"
                log.warning("espeak-ng unavailable, using the synthetic voice: %s", _engine_error)
        return _engine


def espeak_available() -> bool:
    return _get_engine() is not None


def _tone_voice(text: str, style: VoiceStyle, speed: float, rate: int) -> np.ndarray:
    """A clearly synthetic voice: one gliding harmonic tone per syllable-ish chunk of text."""
    base_hz = 90.0 + 2.2 * style.pitch
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    pieces: list[np.ndarray] = []
    for word in text.split():
        syllables = max(1, sum(ch in "aeiouyAEIOUY" for ch in word))
        for _ in range(syllables):
            length = int(rate * 0.16 / max(0.25, speed))
            t = np.arange(length) / rate
            f0 = base_hz * (1.0 + 0.15 * rng.standard_normal()) * (1.0 - 0.1 * t / t[-1])
            phase = 2 * np.pi * np.cumsum(f0) / rate
            tone = sum(np.sin(k * phase) / k for k in (1, 2, 3, 4))
            pieces.append((0.3 * tone * np.hanning(length)).astype(np.float32))
        pieces.append(np.zeros(int(rate * 0.07 / max(0.25, speed)), dtype=np.float32))
    return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)


def synthesize(
    segments: list[tuple[str | None, str]],
    *,
    speed: float = 1.0,
    language: str | None = None,
) -> tuple[np.ndarray, int, bool]:
    """Speak each (voice, text) segment in turn, with a short pause between speakers.

    Returns (mono float32 samples, sample rate, whether real espeak speech was used).
    """
    engine = _get_engine()
    rate = engine.rate if engine else 22050
    pause = np.zeros(int(rate * _PAUSE_BETWEEN_SEGMENTS_S), dtype=np.float32)
    parts: list[np.ndarray] = []
    real = engine is not None
    for voice, text in segments:
        if not text.strip():
            continue
        style = voice_style(voice, language)
        samples = None
        if engine is not None:
            try:
                samples = engine.say(text, style, speed)
            except Exception as exc:
                log.warning("espeak synthesis failed, using the synthetic voice: %s", exc)
        if samples is None or samples.size == 0:
            real = False
            samples = _tone_voice(text, style, speed, rate)
        if parts:
            parts.append(pause)
        parts.append(samples)
    if not parts:
        # nothing to say: a short silence so the output is still a valid, playable file
        return np.zeros(int(rate * 0.5), dtype=np.float32), rate, real
    return np.concatenate(parts), rate, real

"""Helpers that turn validated values into `OutputSpec`s: sizes, formats, seeds.

Renders stay fast: video sizes are modest and even (H.264 yuv420p), images are capped at
``MAX_IMAGE_SIDE`` on the long side (the generation reports the real file's size).
"""

from __future__ import annotations

import zlib

MAX_IMAGE_SIDE = 1024
IMAGE_TYPES = {"png": "image/png", "webp": "image/webp", "jpeg": "image/jpeg"}
# output_format -> (content type, sample rate, MP3 bitrate)
AUDIO_FORMATS = {
    "mp3_44100_128": ("audio/mpeg", 44100, 128),
    "mp3_44100_192": ("audio/mpeg", 44100, 192),
    "wav_44100": ("audio/wav", 44100, None),
    "wav_24000": ("audio/wav", 24000, None),
}


def even(value: float) -> int:
    return max(2, int(value) - int(value) % 2)


def fit_even(width: int, height: int, max_width: int, max_height: int) -> tuple[int, int]:
    """``width x height`` scaled down (never up) into the box, both even."""
    scale = min(1.0, max_width / width, max_height / height)
    return even(round(width * scale)), even(round(height * scale))


def fit_image(width: int, height: int, max_side: int = MAX_IMAGE_SIDE) -> tuple[int, int]:
    scale = min(1.0, max_side / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def aspect_dims(long_side: int, short_side: int, aspect_ratio: str | None) -> tuple[int, int]:
    """Even (width, height) for a tier's frame and an aspect ratio like ``16:9``."""
    if not aspect_ratio:
        return even(long_side), even(short_side)
    a, b = (float(x) for x in aspect_ratio.split(":"))
    if a >= b:  # landscape or square: keep the tier's height
        return even(short_side * a / b), even(short_side)
    return even(short_side), even(short_side * b / a)


def parse_size(size: str) -> tuple[int, int]:
    w, h = size.lower().split("x")
    return int(w), int(h)


def seed_of(values: dict, salt: str = "") -> int:
    if isinstance(values.get("seed"), int):
        return values["seed"] & 0x7FFFFFFF
    text = str(values.get("prompt") or values.get("text") or "") + salt
    return zlib.crc32(text.encode()) & 0x7FFFFFFF


def caption(values: dict) -> str:
    text = values.get("prompt") or values.get("text") or ""
    return text if isinstance(text, str) else ""

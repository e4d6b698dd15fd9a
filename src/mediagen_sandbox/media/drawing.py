"""Deterministic pictures: seeded gradients, shapes and the prompt drawn as a caption.

Shared by the image and video renderers so a still and a video from the same seed look alike.
"""

from __future__ import annotations

import colorsys
import logging
import os
import textwrap
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

log = logging.getLogger(__name__)


def palette(seed: int) -> list[tuple[int, int, int]]:
    """Four harmonious colours picked from the seed (analogous hues, varied lightness)."""
    rng = np.random.default_rng(seed)
    base_hue = float(rng.random())
    colours = []
    for step, lightness in zip((0.0, 0.08, 0.5, 0.58), (0.55, 0.35, 0.6, 0.45), strict=True):
        hue = (base_hue + step + float(rng.normal(0, 0.02))) % 1.0
        r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.65)
        colours.append((round(r * 255), round(g * 255), round(b * 255)))
    return colours


def gradient(width: int, height: int, seed: int, span: float = 1.0) -> np.ndarray:
    """A diagonal two-colour gradient as ``uint8`` RGB of shape (height, width, 3)
    (:func:`gradient_picture` as an array)."""
    return np.asarray(gradient_picture(width, height, seed, span))


def gradient_picture(width: int, height: int, seed: int, span: float = 1.0) -> Image.Image:
    """A diagonal two-colour gradient as an RGB picture.

    ``span`` > 1 makes the colour cycle repeat along x (the video renderer scrolls it).
    Computed on a grid 8x coarser and scaled up bilinearly: a smooth gradient loses nothing,
    and a 1080p frame costs milliseconds instead of half a second.
    """
    first, second = palette(seed)[:2]
    small_w, small_h = max(2, -(-width // 8)), max(2, -(-height // 8))
    x = np.linspace(0.0, span, small_w, dtype=np.float32)
    y = np.linspace(0.0, 1.0, small_h, dtype=np.float32)
    # triangle wave along x so the colour cycle repeats without a seam
    tx = 1.0 - np.abs((x % 2.0) - 1.0)
    t = np.clip(0.7 * tx[None, :] + 0.3 * y[:, None], 0.0, 1.0)[..., None]
    a = np.asarray(first, dtype=np.float32)
    b = np.asarray(second, dtype=np.float32)
    small = Image.fromarray((a * (1.0 - t) + b * t).astype(np.uint8))
    return small.resize((width, height), Image.Resampling.BILINEAR)


def overlay(picture: Image.Image, layer: Image.Image, at: tuple[int, int] = (0, 0)) -> None:
    """Lay the RGBA ``layer`` over ``picture`` at ``at``, through the layer's alpha.

    On an opaque RGB picture, pasting through the alpha is the same blend as compositing
    (the same pixels) at half the cost of working in RGBA: images without transparency are
    drawn in RGB."""
    if picture.mode == "RGBA":
        picture.alpha_composite(layer, at)
    else:
        picture.paste(layer, at, layer)


def draw_shapes(image: Image.Image, seed: int, count: int = 7, opaque: bool = False) -> None:
    """Circles and rounded rectangles placed from the seed: translucent, or ``opaque``
    (the subject of a transparent-background image, like a sticker)."""
    rng = np.random.default_rng(seed + 1)
    colours = palette(seed)[2:]
    width, height = image.size
    layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    scale = min(width, height)
    for index in range(count):
        cx, cy = rng.random() * width, rng.random() * height
        radius = scale * (0.08 + 0.2 * rng.random())
        opacity = 255 if opaque else int(110 + 100 * rng.random())
        colour = colours[index % len(colours)] + (opacity,)
        box = (cx - radius, cy - radius, cx + radius, cy + radius)
        if index % 3 == 2:
            draw.rounded_rectangle(box, radius=radius * 0.3, fill=colour)
        else:
            draw.ellipse(box, fill=colour)
    overlay(image, layer)


@lru_cache(maxsize=16)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled font at ``size`` pixels (no system fonts needed)."""
    return ImageFont.load_default(size=max(8, size))


CAPTION_CHARS = 1000  # far more than max_lines of any frame's width can show


def caption(text: str, width: int, height: int, max_lines: int = 3) -> Image.Image | None:
    """The text wrapped on a rounded translucent plate, as a small RGBA patch (or None).

    Only the start of the text is read: a few short lines show, however long the prompt."""
    text = " ".join(text[:CAPTION_CHARS].split())
    if not text:
        return None
    size = max(10, min(width, height) // 18)
    face = font(size)
    chars_per_line = max(8, int(width * 0.85 / (size * 0.55)))
    lines = textwrap.wrap(text, chars_per_line)[:max_lines]
    if len(textwrap.wrap(text, chars_per_line)) > max_lines:
        lines[-1] = lines[-1][: max(1, chars_per_line - 1)].rstrip() + "…"
    body = "\n".join(lines)
    probe = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    left, top, right, bottom = probe.multiline_textbbox((0, 0), body, font=face, spacing=size // 4)
    pad = size // 2
    patch_w = min(width, right - left + 2 * pad)
    patch_h = min(height, bottom - top + 2 * pad)
    patch = Image.new("RGBA", (patch_w, patch_h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(patch)
    draw.rounded_rectangle((0, 0, patch_w - 1, patch_h - 1), radius=pad, fill=(0, 0, 0, 120))
    draw.multiline_text(
        (pad - left, pad - top), body, font=face, fill=(255, 255, 255, 255), spacing=size // 4
    )
    return patch


def caption_position(patch: Image.Image, width: int, height: int) -> tuple[int, int]:
    """Centred horizontally, in the lower part of the frame."""
    x = (width - patch.width) // 2
    y = max(0, height - patch.height - max(4, height // 12))
    return x, y


def fit_cover(image: Image.Image, width: int, height: int) -> Image.Image:
    """Scale and centre-crop ``image`` to exactly ``width`` x ``height`` (like CSS cover)."""
    scale = max(width / image.width, height / image.height)
    new_w = max(width, round(image.width * scale))
    new_h = max(height, round(image.height * scale))
    resized = image.resize((new_w, new_h), Image.Resampling.BILINEAR)
    left = (new_w - width) // 2
    top = (new_h - height) // 2
    return resized.crop((left, top, left + width, top + height))


def load_picture(path: str, width: int, height: int) -> Image.Image | None:
    """An input asset as an RGBA picture of the given size: an image, or a video's first frame.

    Returns None when the file is neither (audio inputs, unreadable files): inputs only decorate
    an output, they never make a render fail.
    """
    from PIL import UnidentifiedImageError

    try:
        with Image.open(path) as img:
            img.draft("RGB", (width, height))
            return fit_cover(img.convert("RGBA"), width, height)
    except UnidentifiedImageError:
        pass  # not an image: maybe a video, below
    except (OSError, ValueError) as exc:
        log.warning("input image %s is unreadable, ignoring it: %s", os.path.basename(path), exc)
        return None
    import av

    try:
        with av.open(path) as container:
            if not container.streams.video:
                return None  # audio input: nothing to show
            for frame in container.decode(video=0):
                return fit_cover(frame.to_image().convert("RGBA"), width, height)
    except (av.FFmpegError, OSError, ValueError) as exc:
        log.warning(
            "input %s is neither image nor video, ignoring it: %s", os.path.basename(path), exc
        )
    return None

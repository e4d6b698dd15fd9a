"""Still images: a seeded gradient with shapes, input images blended in, the prompt as caption."""

from __future__ import annotations

import os

from PIL import Image

from . import drawing
from .formats import atomic_destination
from .spec import OutputSpec, RenderedOutput

_PIL_FORMATS = {"image/png": "PNG", "image/webp": "WEBP", "image/jpeg": "JPEG"}

# Input keys that hold images worth showing in the output (the rest are blended too, sorted).
_PRIMARY_INPUT_KEYS = ("image", "reference_images", "first_frame", "mask_image")


def _ordered_inputs(inputs: dict[str, str]) -> list[tuple[str, str]]:
    def rank(key: str) -> tuple[int, str]:
        stem = key.split("[", 1)[0].split(".", 1)[0]
        primary = stem in _PRIMARY_INPUT_KEYS
        return (0 if primary else 1, key)

    return sorted(inputs.items(), key=lambda item: rank(item[0]))


def compose_picture(spec: OutputSpec, width: int, height: int) -> Image.Image:
    """The picture for ``spec``: background (or transparency), inputs, shapes, caption.

    RGBA for a transparent background; otherwise RGB, every layer laid on through its alpha
    (the same pixels as compositing in RGBA, at half the cost)."""
    transparent = spec.transparent and spec.content_type != "image/jpeg"
    if transparent:
        picture = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    else:
        picture = drawing.gradient_picture(width, height, spec.seed)

    # Chained inputs: blend each input picture in so the derivation is visible.
    blended = 0
    for key, path in _ordered_inputs(spec.inputs):
        if blended >= 4:
            break
        source = drawing.load_picture(path, width, height)
        if source is None:
            continue
        if key.startswith("mask"):
            # a mask brightens where it is white: show it as a light veil
            veil = Image.new("RGBA", (width, height), (255, 255, 255, 0))
            veil.putalpha(source.convert("L").point(lambda v: v // 3))
            drawing.overlay(picture, veil)
        else:
            weight = 0.6 if blended == 0 else 0.35
            alpha = source.getchannel("A").point(lambda v, w=weight: int(v * w))
            source.putalpha(alpha)
            drawing.overlay(picture, source)
        blended += 1

    drawing.draw_shapes(picture, spec.seed, count=4 if blended else 7, opaque=transparent)
    patch = drawing.caption(spec.text, width, height)
    if patch is not None:
        drawing.overlay(picture, patch, drawing.caption_position(patch, width, height))
    return picture


def render_image(spec: OutputSpec, dest_path: str) -> RenderedOutput:
    width = int(spec.width or 1024)
    height = int(spec.height or 1024)
    if width < 1 or height < 1:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    pil_format = _PIL_FORMATS[spec.content_type]
    picture = compose_picture(spec, width, height)
    keep_alpha = spec.transparent and pil_format in ("PNG", "WEBP")
    out = picture if keep_alpha or picture.mode == "RGB" else picture.convert("RGB")
    options: dict = {}
    if pil_format == "JPEG":
        options = {"quality": 88, "optimize": False}
    elif pil_format == "WEBP":
        options = {"quality": 85, "method": 2}
    elif pil_format == "PNG":
        options = {"compress_level": 3}
    with atomic_destination(dest_path) as tmp_path:
        out.save(tmp_path, format=pil_format, **options)
        with Image.open(tmp_path) as written:
            real_w, real_h = written.size
    return RenderedOutput(
        content_type=spec.content_type,
        size_bytes=os.path.getsize(dest_path),
        width=real_w,
        height=real_h,
        duration_seconds=None,
    )

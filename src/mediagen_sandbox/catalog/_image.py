"""The image models: priced per image, by a quality x size matrix, and by a quality tier."""

from __future__ import annotations

from ..media.spec import OutputSpec
from ._model import Ctx, ModelDef, build_entry, mode
from ._outputs import IMAGE_TYPES, caption, parse_size, seed_of
from ._types import detail
from ._video import inputs_of

ASPECTS = ["1:1", "4:3", "3:4", "16:9", "9:16"]
SHARED_OPTIONAL = ["output_format", "response_format", "moderation"]
SHARED_DEFAULTS = {"output_format": "png", "response_format": "url", "moderation": "auto"}


def aspect_size(long_side: int, aspect_ratio: str | None) -> tuple[int, int]:
    a, b = (int(x) for x in (aspect_ratio or "1:1").split(":"))
    if a >= b:
        return long_side, round(long_side * b / a)
    return round(long_side * a / b), long_side


def images(ctx: Ctx, size: tuple[int, int], count_field: str = "generate_image_count"):
    v = ctx.values
    fmt = v.get("output_format") or "png"
    count = int(v.get(count_field) or 1)
    return [
        OutputSpec(
            media="image",
            content_type=IMAGE_TYPES[fmt],
            width=size[0],
            height=size[1],
            text=caption(v),
            seed=seed_of(v, f"{ctx.entry['id']}#{i}"),
            transparent=v.get("background") == "transparent",
            inputs=inputs_of(ctx),
        )
        for i in range(count)
    ]


# --- pixel-1: per image, by resolution tier ---------------------------------------------------

PIXEL_1 = ModelDef(
    entry=build_entry(
        id="pixel-1",
        type="image",
        name="Pixel 1",
        description="Everyday images; edit with reference images and an inpainting mask.",
        family="pixel",
        modes=[
            mode(
                "default",
                "Generate or edit",
                ["prompt"],
                [
                    "aspect_ratio",
                    "generate_image_count",
                    "resolution",
                    "reference_images",
                    "reference_names",
                    "mask_image",
                    "negative_prompt",
                    *SHARED_OPTIONAL,
                ],
                allowed={"aspect_ratio": ASPECTS, "resolution": ["1k", "2k"]},
                defaults={
                    "aspect_ratio": "1:1",
                    "generate_image_count": 1,
                    "resolution": "1k",
                    **SHARED_DEFAULTS,
                },
                ranges={"generate_image_count": {"minimum": 1, "maximum": 4}},
                max_counts={"reference_images": 4},
                price={
                    "unit": "image",
                    "by": "resolution",
                    "table": {"1k": 1, "2k": 2},
                    "count": "generate_image_count",
                    "per_input": {"reference_images": 0.5},
                },
                example={
                    "model": "pixel-1",
                    "prompt": "A lighthouse on a cliff, watercolor",
                    "aspect_ratio": "1:1",
                },
            )
        ],
        rules=[{"kind": "requires", "field": "mask_image", "needs": ["reference_images"]}],
    ),
    outputs=lambda ctx: images(
        ctx,
        aspect_size(1024 if ctx.values["resolution"] == "1k" else 2048, ctx.values["aspect_ratio"]),
    ),
)

# --- pixel-pro: a quality x size matrix; an aspect preset or a WxH size -----------------------

PRESETS = {
    "square": "1024x1024",
    "square_hd": "1024x1024",
    "portrait_4_3": "1024x1536",
    "portrait_16_9": "1024x1536",
    "landscape_4_3": "1536x1024",
    "landscape_16_9": "1536x1024",
}
SIZES = ["1024x1024", "1536x1024", "1024x1536"]
QUALITIES = {"low": 0.5, "medium": 2, "high": 8, "xhigh": 12, "max": 16}


def _pixel_pro_check(ctx: Ctx) -> None:
    if ctx.values.get("background") == "transparent" and ctx.values["output_format"] == "jpeg":
        ctx.errors.append(
            detail("background", "transparent needs output_format png or webp", "incompatible")
        )


PIXEL_PRO = ModelDef(
    entry=build_entry(
        id="pixel-pro",
        type="image",
        name="Pixel Pro",
        description="Detailed images priced by quality and size; transparent backgrounds.",
        family="pixel",
        modes=[
            mode(
                "default",
                "Generate or edit",
                ["prompt"],
                [
                    "size",
                    "image_size",
                    "quality",
                    "background",
                    "generate_image_count",
                    "reference_images",
                    "mask_image",
                    *SHARED_OPTIONAL,
                ],
                allowed={
                    "size": SIZES,
                    "quality": list(QUALITIES),
                    "background": ["transparent", "opaque", "auto"],
                },
                defaults={
                    "size": "1024x1024",
                    "quality": "medium",
                    "background": "auto",
                    "generate_image_count": 1,
                    **SHARED_DEFAULTS,
                },
                ranges={"generate_image_count": {"minimum": 1, "maximum": 4}},
                max_counts={"reference_images": 8},
                price={
                    "unit": "image",
                    "by": "quality|size",
                    "table": {
                        f"{q}|{s}": credits * (1 if s == "1024x1024" else 1.5)
                        for q, credits in QUALITIES.items()
                        for s in SIZES
                    },
                    "count": "generate_image_count",
                    "per_input": {"reference_images": 0.25},
                    "derive": {"size": {"from": "image_size", "map": PRESETS}},
                },
                example={
                    "model": "pixel-pro",
                    "prompt": "A glass teapot, studio product shot",
                    "size": "1024x1024",
                    "quality": "low",
                },
            )
        ],
        rules=[
            {"kind": "mutually_exclusive", "fields": ["size", "image_size"]},
            {"kind": "requires", "field": "mask_image", "needs": ["reference_images"]},
        ],
    ),
    outputs=lambda ctx: images(ctx, parse_size(ctx.values["size"])),
    check=_pixel_pro_check,
)

# --- lumen-4k: quality tiers 1K / 2K / 4K -----------------------------------------------------

LUMEN_SIDES = {"1K": 1024, "2K": 2048, "4K": 4096}

LUMEN_4K = ModelDef(
    entry=build_entry(
        id="lumen-4k",
        type="image",
        name="Lumen 4K",
        description="High-resolution images, priced by quality tier (1K, 2K, 4K).",
        family="lumen",
        modes=[
            mode(
                "default",
                "Generate",
                ["prompt"],
                [
                    "quality",
                    "aspect_ratio",
                    "generate_image_count",
                    "reference_images",
                    "negative_prompt",
                    *SHARED_OPTIONAL,
                ],
                allowed={"quality": list(LUMEN_SIDES), "aspect_ratio": ASPECTS},
                defaults={
                    "quality": "1K",
                    "aspect_ratio": "1:1",
                    "generate_image_count": 1,
                    **SHARED_DEFAULTS,
                },
                ranges={"generate_image_count": {"minimum": 1, "maximum": 4}},
                max_counts={"reference_images": 6},
                price={
                    "unit": "image",
                    "by": "quality",
                    "table": {"1K": 2, "2K": 4, "4K": 8},
                    "count": "generate_image_count",
                },
                example={
                    "model": "lumen-4k",
                    "prompt": "Mountain lake at sunrise, 35mm photo",
                    "quality": "1K",
                },
            )
        ],
    ),
    outputs=lambda ctx: images(
        ctx, aspect_size(LUMEN_SIDES[ctx.values["quality"]], ctx.values["aspect_ratio"])
    ),
)

MODELS = [PIXEL_1, PIXEL_PRO, LUMEN_4K]

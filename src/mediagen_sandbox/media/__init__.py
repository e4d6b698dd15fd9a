"""Real media for the sandbox: render outputs, probe uploads.

`render` runs inside the job runner's worker process; `probe` runs when an upload completes.
Heavy imports (PyAV, Pillow, numpy) happen lazily inside the submodules' callers so importing
this package is cheap for the API process.
"""

from __future__ import annotations

from .formats import (
    CONTENT_TYPES,
    RENDERABLE,
    extension_for,
    media_kind_for,
    normalize_content_type,
)
from .spec import OutputSpec, ProbeResult, RenderedOutput

__all__ = [
    "CONTENT_TYPES",
    "RENDERABLE",
    "OutputSpec",
    "ProbeResult",
    "RenderedOutput",
    "extension_for",
    "media_kind_for",
    "normalize_content_type",
    "probe",
    "render",
]


def render(spec: OutputSpec, dest_path: str) -> RenderedOutput:
    """Write the media ``spec`` describes to ``dest_path`` (atomically) and measure it.

    The returned values (size, dimensions, duration) are read back from the written file.
    Raises ValueError for a spec that cannot be rendered (unknown content type, odd video size).
    """
    content_type = normalize_content_type(spec.content_type)
    if content_type not in RENDERABLE:
        raise ValueError(f"cannot render {spec.content_type!r}; supported: {sorted(RENDERABLE)}")
    if content_type != spec.content_type:
        import dataclasses

        spec = dataclasses.replace(spec, content_type=content_type)
    if content_type.startswith("image/"):
        from .images import render_image

        return render_image(spec, dest_path)
    if content_type == "video/mp4":
        from .video import render_video

        return render_video(spec, dest_path)
    from .sound import render_audio

    return render_audio(spec, dest_path)


def probe(path: str, declared_content_type: str) -> ProbeResult:
    """What the file at ``path`` is; ValueError with a clear message if not the declared type."""
    from .probing import probe as _probe

    return _probe(path, declared_content_type)

"""Content types the sandbox knows, their file extensions and media kinds.

One table so rendering, probing and the server's file naming agree on every name.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress

# content type -> (file extension, media kind)
CONTENT_TYPES: dict[str, tuple[str, str]] = {
    "image/png": (".png", "image"),
    "image/jpeg": (".jpg", "image"),
    "image/webp": (".webp", "image"),
    "video/mp4": (".mp4", "video"),
    "video/webm": (".webm", "video"),
    "audio/mpeg": (".mp3", "audio"),
    "audio/wav": (".wav", "audio"),
    "audio/mp4": (".m4a", "audio"),
    "audio/ogg": (".ogg", "audio"),
}

# What `render` can write (a subset of what `probe` accepts).
RENDERABLE: frozenset[str] = frozenset(
    {"image/png", "image/jpeg", "image/webp", "video/mp4", "audio/mpeg", "audio/wav"}
)

_ALIASES = {
    "image/jpg": "image/jpeg",
    "audio/mp3": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-m4a": "audio/mp4",
}


def normalize_content_type(content_type: str) -> str:
    """Lower-case, drop parameters (``; codecs=...``) and map common aliases."""
    base = content_type.split(";", 1)[0].strip().lower()
    return _ALIASES.get(base, base)


def extension_for(content_type: str) -> str:
    """``"image/png"`` -> ``".png"``; raises ValueError for a type the sandbox does not know."""
    entry = CONTENT_TYPES.get(normalize_content_type(content_type))
    if entry is None:
        raise ValueError(f"unsupported content type {content_type!r}")
    return entry[0]


def media_kind_for(content_type: str) -> str:
    entry = CONTENT_TYPES.get(normalize_content_type(content_type))
    if entry is None:
        raise ValueError(f"unsupported content type {content_type!r}")
    return entry[1]


RENDERING_PREFIX = ".rendering-"  # a render in progress (what a killed worker leaves behind)


@contextmanager
def atomic_destination(dest_path: str) -> Iterator[str]:
    """Yield a temporary path next to ``dest_path``; move it into place only on success.

    Readers never see a half-written output, and a failed render leaves nothing behind.
    """
    directory = os.path.dirname(os.path.abspath(dest_path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp_path = tempfile.mkstemp(prefix=RENDERING_PREFIX, dir=directory)
    os.close(fd)
    try:
        yield tmp_path
        os.replace(tmp_path, dest_path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp_path)
        raise

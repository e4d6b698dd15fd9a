"""From the client's ``GenerationOutput`` to a :class:`MediaItem` over its local cached copy.

One place knows how the client exposes the local copy, so the players, the job card, the
gallery and the HTML reprs agree (and one edit follows a change in the client).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mediagen.widgets._media import MediaItem, make_item
from mediagen.wire._fields import read_field


def local_copy(output: Any) -> Path:
    """The path of the output's bytes on this machine, downloading them first if needed."""
    for name in ("local_path", "cached_path", "path"):
        value = getattr(output, name, None)
        if callable(value):
            value = value()
        if value and Path(value).is_file():
            return Path(value)
    fetch = getattr(output, "download", None) or getattr(output, "fetch", None)
    if callable(fetch):
        return Path(fetch())
    raise LookupError("This output has no local copy and cannot be downloaded here.")


def item_at(path: str | Path, output: Any, label: str) -> MediaItem:
    """A playable item for ``output`` whose local copy is ``path`` (already fetched)."""
    return make_item(
        path,
        read_field(output, "content_type"),
        label=label,
        width=read_field(output, "width"),
        height=read_field(output, "height"),
        duration_seconds=read_field(output, "duration_seconds"),
    )


def output_item(output: Any, *, label: str = "") -> MediaItem:
    """A playable item for a generation output (its bytes come from the local copy)."""
    path = local_copy(output)
    return make_item(
        path,
        getattr(output, "content_type", None),
        label=label or getattr(output, "filename", None) or path.name,
        width=getattr(output, "width", None),
        height=getattr(output, "height", None),
        duration_seconds=getattr(output, "duration_seconds", None),
    )

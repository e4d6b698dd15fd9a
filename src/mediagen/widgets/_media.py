"""Media transport: the browser asks the kernel for bytes, the kernel answers from local files.

Why not a bytes trait: traits are widget *state*, and JupyterLab can save widget state into the
notebook file ("Save Widget State Automatically"), which would copy every video into the
``.ipynb``. Instead a view calls the anywidget command ``media`` with an opaque key; the kernel
looks the key up in the widget's own registry (never an arbitrary path from the browser), reads
the local cached copy and answers with the bytes as a message buffer. The front end turns them
into a Blob URL and revokes it when the view changes or goes away. Because the bytes come from
the local copy, media keep showing after the service's temporary URL has expired.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import traitlets
from anywidget.experimental import command

#: The front end asks for bytes only when a view is shown; cap one answer so a stray huge file
#: cannot stall the kernel's message loop. Larger files are refused with a readable message.
MAX_MEDIA_BYTES = 512 * 1024 * 1024

_KIND_BY_PREFIX = {"image/": "image", "video/": "video", "audio/": "audio"}


def media_kind(content_type: str | None) -> str:
    """``image``, ``video`` or ``audio`` from a content type (``file`` when unknown)."""
    for prefix, kind in _KIND_BY_PREFIX.items():
        if (content_type or "").startswith(prefix):
            return kind
    return "file"


def guess_content_type(path: str | Path) -> str:
    """The content type of a local file from its name (``application/octet-stream`` if unknown)."""
    guessed, _ = mimetypes.guess_type(str(path))
    return guessed or "application/octet-stream"


@dataclass(frozen=True)
class MediaItem:
    """One playable file: where its bytes are and what the front end needs to show it."""

    key: str
    path: Path
    content_type: str
    label: str = ""
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None

    @property
    def kind(self) -> str:
        return media_kind(self.content_type)

    def describe(self) -> dict[str, Any]:
        """The JSON-safe description a view receives (no bytes, no path)."""
        return {
            "key": self.key,
            "kind": self.kind,
            "content_type": self.content_type,
            "label": self.label,
            "width": self.width,
            "height": self.height,
            "duration_seconds": self.duration_seconds,
        }

    def as_output(self) -> dict[str, Any]:
        """The facts of a generation output, for the HTML snapshots (``_html.thumbnail_html``)."""
        return {
            "local_path": str(self.path),
            "content_type": self.content_type,
            "width": self.width,
            "height": self.height,
            "duration_seconds": self.duration_seconds,
        }


def media_key(path: Path) -> str:
    """A stable opaque key for a file: the browser never sees the path itself."""
    return "m_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:20]


def make_item(
    path: str | Path,
    content_type: str | None = None,
    *,
    label: str = "",
    width: int | None = None,
    height: int | None = None,
    duration_seconds: float | None = None,
) -> MediaItem:
    """A :class:`MediaItem` for a local file (content type guessed from the name if omitted)."""
    path = Path(path)
    return MediaItem(
        key=media_key(path),
        path=path,
        content_type=content_type or guess_content_type(path),
        label=label or path.name,
        width=width,
        height=height,
        duration_seconds=duration_seconds,
    )


class MediaSource(traitlets.HasTraits):
    """Trait class for widgets that show media: a registry of keys and the ``media`` command.

    Mix into an ``anywidget.AnyWidget`` subclass; call :meth:`register_media` for each file a
    view may ask for. The JS side is ``fetchMediaUrl`` in the views' ``shared.ts``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._media_items: dict[str, MediaItem] = {}
        super().__init__(*args, **kwargs)

    def register_media(self, item: MediaItem) -> MediaItem:
        """Allow views of this widget to fetch ``item``'s bytes by its key."""
        self._media_items[item.key] = item
        return item

    def forget_media(self, key: str) -> None:
        """Drop the media kept for ``key``: its bytes leave the widget's state."""
        self._media_items.pop(key, None)

    @command
    def media(self, msg: Any, buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """Answer a view's request for the bytes of one registered file."""
        key = msg.get("key") if isinstance(msg, dict) else None
        item = self._media_items.get(key) if isinstance(key, str) else None
        if item is None:
            return {"error": "This media is not available in this kernel session."}, []
        try:
            size = item.path.stat().st_size
            if size > MAX_MEDIA_BYTES:
                return {
                    "error": f"{item.path.name} is too large to show inline ({size} bytes)."
                }, []
            data = item.path.read_bytes()
        except OSError as exc:
            return {"error": f"Cannot read {item.path.name}: {exc.strerror or exc}"}, []
        return {"content_type": item.content_type, "size": len(data)}, [data]

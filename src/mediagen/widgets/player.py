"""``MediaPlayer``: one image, video or audio file from the kernel, shown inline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import traitlets

from mediagen.display import _html
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._media import MediaItem, MediaSource, make_item
from mediagen.widgets._outputs import output_item
from mediagen.widgets._snapshot import SNAPSHOT_THUMBNAIL_PX, StaticFallback


class MediaPlayer(StaticFallback, MediaSource, MediagenWidget):
    """An ``<img>``, ``<video controls>`` or ``<audio controls>`` for a local file.

    The bytes travel on request (see ``_media``), never in widget state, so a saved notebook
    stays small and the player keeps working after the service's URL expires.
    """

    _module = "player.js"

    item = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    caption = traitlets.Bool(True).tag(sync=True)

    def __init__(self, source: MediaItem | str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if source is not None:
            self.show(source)

    @classmethod
    def from_output(cls, output: Any, **kwargs: Any) -> MediaPlayer:
        """A player for a generation output's local cached copy (downloaded if needed)."""
        return cls(output_item(output), **kwargs)

    def show(self, source: MediaItem | str | Path, content_type: str | None = None) -> None:
        """Play another file (a path, or a :class:`MediaItem`)."""
        item = source if isinstance(source, MediaItem) else make_item(source, content_type)
        previous = (self.item or {}).get("key")
        self.register_media(item)
        if previous and previous != item.key:
            self.forget_media(previous)
        self.item = item.describe()

    # -- static fallback -------------------------------------------------------------------

    def snapshot_text(self) -> str:
        item = self.item or {}
        return f"MediaPlayer: {item.get('label') or 'empty'}"

    def snapshot_html(self) -> str:
        """A thumbnail for an image, a labelled box for video and audio: never the media bytes
        (a saved notebook stays small, as with the widget state)."""
        key = (self.item or {}).get("key")
        item = self._media_items.get(key) if key else None
        if item is None:
            return f"<div>{_html.escape(self.snapshot_text())}</div>"
        thumbnail = _html.thumbnail_html(item.as_output(), thumbnail_px=SNAPSHOT_THUMBNAIL_PX)
        return f'<div style="max-width:{SNAPSHOT_THUMBNAIL_PX}px">{thumbnail}</div>'

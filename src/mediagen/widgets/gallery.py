"""``Gallery``: many generations in one widget, filterable, with media loaded lazily.

One widget for all outputs (not one widget per output): the view renders cards from the
``entries`` trait and asks for an output's bytes only when its card scrolls into view.
Filtering (kind, status, text) runs in the kernel, like the picker's.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import traitlets

from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._media import MediaSource, make_item
from mediagen.widgets._service import Service, field
from mediagen.widgets.job import generation_summary


class Gallery(MediaSource, MediagenWidget):
    _module = "gallery.js"

    kind = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    entries = traitlets.List(traitlets.Dict()).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)

    def __init__(self, service: Service | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service = service
        self._all: dict[str, dict[str, Any]] = {}

    # -- adding ----------------------------------------------------------------------------

    def add(self, generation: Any, paths: Iterable[str | Path] = ()) -> None:
        """Add (or update) a generation; ``paths`` are its outputs' local copies, in order."""
        summary = generation_summary(generation)
        outputs = list(field(generation, "outputs") or [])
        items = []
        for index, (output, path) in enumerate(zip(outputs, paths, strict=False)):
            item = make_item(
                path,
                field(output, "content_type"),
                label=f"{summary['model']} #{index + 1}",
                width=field(output, "width"),
                height=field(output, "height"),
                duration_seconds=field(output, "duration_seconds"),
            )
            self.register_media(item)
            items.append(item.describe())
        summary["items"] = items
        self._all[summary["id"]] = summary
        self._refilter()

    async def add_with_outputs(self, generation: Any) -> None:
        """Add a generation, fetching local copies of its outputs first."""
        paths = []
        if self.service is not None and field(generation, "status") == "completed":
            paths = [await self.service.local_copy(o) for o in field(generation, "outputs") or []]
        self.add(generation, paths)

    def load_recent(self, limit: int = 100, **filters: Any) -> _tasks.Handle:
        """Fill the gallery from the service's history (newest first), in the background."""
        if self.service is None:
            raise ValueError("a Gallery without a service cannot load history")

        async def run() -> None:
            for generation in await self.service.recent(limit=limit, **filters):
                await self.add_with_outputs(generation)

        return _tasks.spawn(run(), reporter=lambda exc: self.report(exc, context="Loading"))

    # -- filtering -------------------------------------------------------------------------

    @traitlets.observe("kind", "status", "query")
    def _on_filter(self, _change: Any) -> None:
        self._refilter()

    def _refilter(self) -> None:
        words = self.query.lower().split()
        shown = []
        for entry in sorted(self._all.values(), key=lambda e: e["created_at"] or "", reverse=True):
            if self.kind and entry["type"] != self.kind:
                continue
            if self.status and entry["status"] != self.status:
                continue
            text = f"{entry['model']} {entry['prompt']} {entry['id']}".lower()
            if any(word not in text for word in words):
                continue
            shown.append(entry)
        self.total = len(self._all)
        self.entries = shown

"""``Gallery``: many generations in one widget, filterable, with media loaded lazily.

One widget for all outputs (not one widget per output): the view renders cards from the
``entries`` trait and asks for an output's bytes only when its card scrolls into view.
Filtering (kind, status, text) runs in the kernel, like the picker's. Each card shows the
settings that set its price (quality, size, duration...), so two similar prompts at different
prices can be told apart. Clicking a card selects it: ``gallery.selected`` is that generation,
back in Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import traitlets

from mediagen.display import _html
from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._media import MediaSource
from mediagen.widgets._outputs import item_at
from mediagen.widgets._service import Service
from mediagen.widgets._snapshot import StaticFallback, generations_html, plural, price_settings
from mediagen.widgets.job import generation_summary
from mediagen.wire._fields import read_field


def _made_settings(outputs: list[Any]) -> dict[str, Any]:
    """Without the request (made elsewhere, no journal): the size and length of what was made."""
    if not outputs:
        return {}
    first = outputs[0]
    width, height = read_field(first, "width"), read_field(first, "height")
    found: dict[str, Any] = {"size": f"{width}x{height}"} if width and height else {}
    if read_field(first, "duration_seconds"):
        found["duration_seconds"] = read_field(first, "duration_seconds")
    return found


class Gallery(StaticFallback, MediaSource, MediagenWidget):
    _module = "gallery.js"

    kind = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    entries = traitlets.List(traitlets.Dict()).tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    #: the id of the card the user clicked ("" for none); see :attr:`selected`
    selected_id = traitlets.Unicode("").tag(sync=True)

    def __init__(self, service: Service | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service = service
        self._all: dict[str, dict[str, Any]] = {}
        self._generations: dict[str, Any] = {}

    # -- results back in Python ------------------------------------------------------------

    @property
    def generations(self) -> list[Any]:
        """Every generation the gallery holds (the client's objects), newest first."""
        order = sorted(self._all.values(), key=lambda e: e["created_at"] or "", reverse=True)
        return [self._generations[e["id"]] for e in order]

    @property
    def selected(self) -> Any:
        """The generation whose card the user clicked last (None before any click)."""
        return self._generations.get(self.selected_id)

    # -- adding ----------------------------------------------------------------------------

    def add(
        self,
        generation: Any,
        paths: Iterable[str | Path] = (),
        *,
        request: Mapping[str, Any] | None = None,
        refilter: bool = True,
    ) -> None:
        """Add (or update) a generation; ``paths`` are its outputs' local copies, in order.

        ``request`` is the body that was sent, when known: its priced settings show on the card.
        """
        summary = generation_summary(generation)
        previous = self._all.get(summary["id"], {})
        outputs = list(read_field(generation, "outputs") or [])
        items = []
        for index, (output, path) in enumerate(zip(outputs, paths, strict=False)):
            item = item_at(path, output, f"{summary['model']} #{index + 1}")
            self.register_media(item)
            items.append(item.describe())
        summary["items"] = items
        settings = price_settings(request) or previous.get("settings") or _made_settings(outputs)
        summary["settings"] = settings
        summary["settings_text"] = _html.settings_text(settings)
        self._all[summary["id"]] = summary
        self._generations[summary["id"]] = generation
        if refilter:
            self._refilter()

    async def add_with_outputs(
        self, generation: Any, *, request: Mapping[str, Any] | None = None
    ) -> None:
        """Add a generation, fetching local copies of its outputs first."""
        self.add(generation, await self._local_copies(generation), request=request)

    async def _local_copies(self, generation: Any) -> list[Path]:
        if self.service is None or read_field(generation, "status") != "completed":
            return []
        return [await self.service.local_copy(o) for o in read_field(generation, "outputs") or []]

    def load_recent(self, limit: int = 100, **filters: Any) -> _tasks.Handle:
        """Fill the gallery from the service's history (newest first), in the background.

        Generations this machine submitted get their settings from the client's journal. The
        cards appear together once their outputs are local (one update of the view, not one
        per generation).
        """
        if self.service is None:
            raise ValueError("a Gallery without a service cannot load history")
        return _tasks.spawn(
            self.load_history(limit, **filters),
            reporter=lambda exc: self.report(exc, context="Loading"),
        )

    async def load_history(self, limit: int = 100, **filters: Any) -> None:
        """Await filling the gallery from history (see :meth:`load_recent`)."""
        assert self.service is not None
        requests = self.service.journal_requests()
        found = []
        for generation in await self.service.recent(limit=limit, **filters):
            gid = read_field(generation, "id")
            if gid in self._all and self._all[gid]["status"] == read_field(generation, "status"):
                continue  # already shown (a job of this session)
            found.append((generation, await self._local_copies(generation)))
        with self.hold_trait_notifications():
            for generation, paths in found:
                gid = read_field(generation, "id")
                if gid not in self._all:  # a job of this session may have finished meanwhile
                    self.add(generation, paths, request=requests.get(gid), refilter=False)
            self._refilter()

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

    # -- static fallback -------------------------------------------------------------------

    def snapshot_text(self) -> str:
        return f"Gallery: {plural(len(self._all), 'generation')}"

    def settings(self) -> dict[str, dict[str, Any]]:
        """Per generation id, the priced settings its card shows."""
        return {gid: entry["settings"] for gid, entry in self._all.items()}

    def snapshot_html(self) -> str:
        return generations_html(self.snapshot_text(), self.generations, self.settings())

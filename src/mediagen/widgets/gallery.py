"""``Gallery``: many generations in one widget, filterable, with media loaded lazily.

One widget for all outputs (not one widget per output): the view renders cards from the
``entries`` trait and asks for an output's bytes only when its card scrolls into view.
Filtering (kind, status, text) runs in the kernel, like the picker's. Each card shows the
settings that set its price (quality, size, duration...), so two similar prompts at different
prices can be told apart. Clicking a card selects it: ``gallery.selected`` is that generation,
back in Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from mediagen.display import _html
from mediagen.display._html import plural
from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._loop_client import on_loop
from mediagen.widgets._media import MediaSource
from mediagen.widgets._outputs import credentials, fetched, item_at
from mediagen.widgets._snapshot import StaticFallback, generations_html, price_settings
from mediagen.widgets.job import generation_summary

if TYPE_CHECKING:
    from typing import TypeAlias

    from mediagen.client import AsyncClient, Client, Generation, GenerationOutput

    #: a generation from the client, or its JSON (made elsewhere, read from a file)
    Shown: TypeAlias = Generation[Any] | Mapping[str, Any]


def _typed(generation: Shown) -> Generation[Any]:
    """The client's model of a generation given as JSON (its outputs then bound to no client)."""
    if not isinstance(generation, Mapping):
        return generation
    from mediagen.client import Generation

    return Generation.from_dict(generation)


def _made_settings(outputs: list[GenerationOutput[Any]]) -> dict[str, Any]:
    """Without the request (made elsewhere, no journal): the size and length of what was made."""
    if not outputs:
        return {}
    first = outputs[0]
    width, height = first.width, first.height
    found: dict[str, Any] = {"size": f"{width}x{height}"} if width and height else {}
    if first.duration_seconds:
        found["duration_seconds"] = first.duration_seconds
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

    def __init__(self, client: Client | AsyncClient | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: the client the history and the outputs' local copies come from (None: shows only
        #: what is added, with the local copies given)
        self.client = client
        self._all: dict[str, dict[str, Any]] = {}
        self._generations: dict[str, Shown] = {}

    # -- results back in Python ------------------------------------------------------------

    @property
    def generations(self) -> list[Shown]:
        """Every generation the gallery holds (the client's objects, or the JSON given to
        :meth:`add`), newest first."""
        order = sorted(self._all.values(), key=lambda e: e["created_at"] or "", reverse=True)
        return [self._generations[e["id"]] for e in order]

    @property
    def selected(self) -> Shown | None:
        """The generation whose card the user clicked last (None before any click)."""
        return self._generations.get(self.selected_id)

    # -- adding ----------------------------------------------------------------------------

    def add(
        self,
        generation: Shown,
        paths: Iterable[str | Path] = (),
        *,
        request: Mapping[str, Any] | None = None,
        refilter: bool = True,
        credentials: Sequence[Mapping[str, Any] | None] = (),
    ) -> None:
        """Add (or update) a generation; ``paths`` are its outputs' local copies, in order.

        ``request`` is the body that was sent, when known: its priced settings show on the card.
        ``credentials`` are what each local copy's content credentials say (the card's badge;
        :meth:`add_with_outputs` reads them).
        """
        summary = generation_summary(generation)
        previous = self._all.get(summary["id"], {})
        outputs = _typed(generation).outputs
        items = []
        for index, (output, path) in enumerate(zip(outputs, paths, strict=False)):
            item = item_at(path, output, f"{summary['model']} #{index + 1}")
            self.register_media(item)
            items.append(item.describe())
        summary["items"] = items
        said = next((dict(c) for c in credentials if c), None)
        summary["credentials"] = said or previous.get("credentials")
        settings = price_settings(request) or previous.get("settings") or _made_settings(outputs)
        summary["settings"] = settings
        summary["settings_text"] = _html.settings_text(settings)
        self._all[summary["id"]] = summary
        self._generations[summary["id"]] = generation
        if refilter:
            self._refilter()

    async def add_with_outputs(
        self, generation: Shown, *, request: Mapping[str, Any] | None = None
    ) -> None:
        """Add a generation, fetching local copies of its outputs first."""
        paths = await self._local_copies(_typed(generation))
        self.add(generation, paths, request=request, credentials=await _credentials(paths))

    async def _local_copies(self, generation: Generation[Any]) -> list[Path]:
        if self.client is None or not generation.completed:
            return []
        return [await fetched(o) for o in generation.outputs]

    def load_recent(self, limit: int = 100, **filters: Any) -> _tasks.Handle:
        """Fill the gallery from the service's history (newest first), in the background.

        Generations this machine submitted get their settings from the client's journal. The
        cards appear together once their outputs are local (one update of the view, not one
        per generation).
        """
        if self.client is None:
            raise ValueError("a Gallery without a client cannot load history")
        return _tasks.spawn(
            self.load_history(limit, **filters),
            reporter=lambda exc: self.report(exc, context="Loading"),
        )

    async def load_history(self, limit: int = 100, **filters: Any) -> None:
        """Await filling the gallery from history (see :meth:`load_recent`)."""
        assert self.client is not None
        requests = _journal_requests(self.client)
        found = []
        for generation in await _recent(on_loop(self.client), limit, **filters):
            gid = generation.id
            if gid in self._all and self._all[gid]["status"] == generation.status:
                continue  # already shown (a job of this session)
            paths = await self._local_copies(generation)
            found.append((generation, paths, await _credentials(paths)))
        with self.hold_trait_notifications():
            for generation, paths, said in found:
                if generation.id not in self._all:  # a job of this session may have ended since
                    self.add(
                        generation,
                        paths,
                        request=requests.get(generation.id),
                        refilter=False,
                        credentials=said,
                    )
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


async def _credentials(paths: list[Path]) -> list[dict[str, Any] | None]:
    return [await credentials(path) for path in paths]


async def _recent(client: AsyncClient, limit: int, **filters: Any) -> list[Generation[AsyncClient]]:
    """The latest ``limit`` generations (newest first), filtered as ``generations.list``."""
    found: list[Generation[AsyncClient]] = []
    async for generation in client.generations.list(**filters):
        found.append(generation)
        if len(found) >= limit:
            break
    return found


def _journal_requests(client: Client | AsyncClient) -> dict[str, dict[str, Any]]:
    """Per generation id, the request body this machine sent (from the client's journal).

    The API's generation does not echo its settings; the journal kept them.
    """
    journal = client.journal
    if journal is None:
        return {}
    return {
        gid: record["request"]
        for gid, record in journal.latest().items()
        if isinstance(record.get("request"), Mapping)
    }

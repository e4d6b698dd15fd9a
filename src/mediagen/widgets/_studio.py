"""``studio()``: the model picker, form, live estimate, job cards, gallery and credit meter,
composed and wired together in one anywidget. Each part stays usable alone.

The studio holds its parts as anywidget references (``parts``, ``cards``) that its view draws
into one CSS grid through anywidget's host, not in ipywidgets containers: a front end that
renders anywidgets (JupyterLab, Notebook 7, VS Code, marimo) renders the whole studio.

Wiring: choosing a model loads the form; the form drives the estimate; a submission adds a job
card; a finished job refreshes the credits, joins the gallery, and its outputs can be fed back
into the form ("use as reference"). On start the studio re-attaches to generations still
pending from before a kernel restart (the client's journal), so their cards pick up again, and
fills the gallery from the history. Under the estimate, a line forecasts from the user's own
settled history how long the request will likely take and how often it fails (the local history
store, synced once when the studio first forecasts; see ``mediagen.history.forecast``).

Results come back into Python: ``studio.last`` is the latest generation finished here,
``studio.generations`` all the studio shows, ``studio.gallery.selected`` the clicked card.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from mediagen.client import Client, MediagenError
from mediagen.display import _html
from mediagen.display._html import plural
from mediagen.widgets import _tasks
from mediagen.widgets._base import EchoedToPage, MediagenWidget, widget_ref
from mediagen.widgets._loop_client import on_loop
from mediagen.widgets._snapshot import StaticFallback, generations_html, price_settings
from mediagen.widgets.credits import Balance, CreditMeter
from mediagen.widgets.estimate import LiveEstimate
from mediagen.widgets.form import RequestForm
from mediagen.widgets.gallery import Gallery
from mediagen.widgets.job import JobCard, generation_summary
from mediagen.widgets.picker import ModelPicker

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Generation
    from mediagen.widgets.gallery import Shown


class Studio(StaticFallback, EchoedToPage, MediagenWidget):
    _module = "studio.js"

    #: the parts the view draws, by place (meter, picker, form, estimate, gallery): anywidget
    #: references (``"anywidget:<model id>"``); the meter and the gallery come after the first
    #: paint
    parts = traitlets.Dict().tag(sync=True)
    #: the job cards' references, newest first
    card_refs = traitlets.List(traitlets.Unicode()).tag(sync=True)
    #: the forecast for the estimated request, from the user's own history (one sentence)
    forecast = traitlets.Unicode("").tag(sync=True)
    #: the folder each card's Save writes into; the user can change it in the studio
    save_folder = traitlets.Unicode("").tag(sync=True)
    #: the id of :attr:`last` (the page echoes it, so a marimo cell reading ``last`` re-runs)
    last_id = traitlets.Unicode("").tag(sync=True)

    #: how many past generations the gallery shows on start
    HISTORY_LIMIT = 48
    #: how long building the studio waits for a catalog already asked for (seconds): a quick
    #: one is then in the first paint; a slow one follows when it comes
    CATALOG_WAIT = 0.25

    def __init__(
        self,
        client: Client | AsyncClient | None = None,
        *,
        poll_interval: float | None = None,
        poll_cap: float | None = None,
        reattach: bool = True,
        debounce: float = 0.3,
        save_dir: str | Path = ".",
        history: bool = True,
    ) -> None:
        #: the client every part calls (``Client()`` from the environment when none is given)
        self.client: Client | AsyncClient = client if client is not None else Client()
        #: how the job cards poll: ``poll_interval`` s at first, backing off to ``poll_cap``;
        #: None for both: as the client is configured to (2 s -> 5 s by default)
        self.poll_interval = _polling(poll_interval, poll_cap)
        # The first paint needs the catalog: ask for it before building anything, so it is on
        # its way while the widgets are made. The credit meter and the gallery follow the first
        # paint (``_start``), as do the credits, the re-attached jobs and the gallery's history:
        # each anywidget is one more module the page must load before the studio shows.
        catalog = _catalog_started(self.client)
        #: the one balance the meter and the estimate show
        self.balance = Balance(self.client)
        self._meter: CreditMeter | None = None
        self._gallery: Gallery | None = None
        self.form = RequestForm(uploader=self._upload)
        self.estimate = LiveEstimate(
            self.client, self.form, debounce=debounce, balance=self.balance
        )
        self._forecasts = 0  # latest wins: only the newest request's forecast is shown
        self._history_synced = False
        self.cards: list[JobCard] = []
        # Built last: a catalog that came while the rest was built is in the picker's first
        # state, so the page shows it with the studio instead of one message later.
        self.picker = ModelPicker(_arrived(catalog, self.CATALOG_WAIT))
        #: the latest generation that finished in this studio (None until one does)
        self.last: Any = None
        # One grid, laid out by mediagen.css (.mg-studio): the meter on top, the picker on the
        # left beside the form, estimate and forecast, everything else full width; each part
        # has its place, so the meter and the gallery arriving later move nothing.
        super().__init__(
            parts={
                "picker": widget_ref(self.picker),
                "form": widget_ref(self.form),
                "estimate": widget_ref(self.estimate),
            },
            save_folder=str(Path(save_dir).expanduser().resolve()),
        )
        self.picker.observe(self._on_model, names="value")
        self.estimate.on_submitted(self._on_submitted)
        # a new quote, or the same quote again for another request (status: ready once more)
        self.estimate.observe(self._on_quote, names=["estimate", "status"])
        self.ready = _tasks.spawn(
            self._start(catalog, reattach, history), reporter=self._start_failed
        )

    @property
    def meter(self) -> CreditMeter:
        """The credit meter: balance, spend limits and this session's spend."""
        if self._meter is None:
            self._meter = CreditMeter(self.client, balance=self.balance)
            self.parts = {**self.parts, "meter": widget_ref(self._meter)}
        return self._meter

    @property
    def gallery(self) -> Gallery:
        """The gallery of finished generations, this session's and the history's."""
        if self._gallery is None:
            self._gallery = Gallery(self.client)
            self.parts = {**self.parts, "gallery": widget_ref(self._gallery)}
        return self._gallery

    def shown_widgets(self) -> list[MediagenWidget]:
        """The widgets the studio shows (the parts made so far, then the cards)."""
        made = [self._meter, self.picker, self.form, self.estimate, self._gallery]
        return [part for part in made if part is not None] + list(self.cards)

    @property
    def generations(self) -> list[Shown]:
        """Every generation the studio shows (job cards and gallery), newest first."""
        found: dict[str, Shown] = {c.result.id: c.result for c in self.cards}
        shown = self._gallery.generations if self._gallery is not None else []
        for generation in shown:  # the gallery may hold JSON given to it: read as it shows it
            found.setdefault(generation_summary(generation)["id"], generation)
        return sorted(found.values(), key=_created, reverse=True)

    async def _start(self, catalog: Awaitable[list[Any]], reattach: bool, history: bool) -> None:
        if not self.picker.options:  # the catalog was not in by the end of the cell
            self.picker.loading = True
            try:
                self.picker.set_models(await catalog)
            finally:
                self.picker.loading = False
        # the first paint is on its way: now the parts it did without
        self.meter.refresh()
        gallery = self.gallery
        if reattach:
            # generations this machine submitted that were still pending (a kernel restart)
            for generation in await on_loop(self.client).generations.resume():
                self.attach(generation)
        if history:
            await gallery.load_history(self.HISTORY_LIMIT)

    async def _upload(self, name: str, content_type: str, data: bytes) -> str:
        """Upload a file the form was given as ``name``; its asset id, for the request."""
        uploads = on_loop(self.client).uploads
        uploaded = await uploads.upload(data, filename=name, content_type=content_type)
        return uploaded.asset_id

    def _start_failed(self, exc: BaseException) -> None:
        self.picker.report(exc, context="Loading the catalog")

    def _on_model(self, change: Any) -> None:
        entry = self.picker.entry_for(change["new"])
        if entry is not None:
            with self.form.reporting("Loading the form"):
                self.form.load(entry)

    def _on_quote(self, change: Any) -> None:
        self._forecasts += 1
        if self.estimate.status != "ready" or not self.estimate.estimate:
            self.forecast = ""
            return
        _tasks.spawn(
            self._forecast(dict(self.form.request), self._forecasts),
            reporter=self._forecast_failed,
        )

    async def _forecast(self, request: dict[str, Any], ticket: int) -> None:
        from mediagen import history

        sync, self._history_synced = not self._history_synced, True
        try:
            # from the user's own history: files, maybe a sync, so on a worker thread
            note = await asyncio.to_thread(history.request_note, self.client, request, sync=sync)
        except (MediagenError, OSError):  # a forecast is a hint: the estimate still stands
            note = ""
        if ticket == self._forecasts:
            self.forecast = note

    def _forecast_failed(self, exc: BaseException) -> None:
        """A forecast is a hint beside the estimate, which still stands: no banner, a log line
        (a kernel shutting down refuses the worker thread that reads the history)."""
        self.forecast = ""
        log.warning("Forecasting the wait from the history: %s", exc, exc_info=exc)

    def _on_submitted(
        self, generation: Generation[AsyncClient], request: dict[str, Any], estimate: dict[str, Any]
    ) -> None:
        self.form.submitted(request)
        self.attach(generation, reserved=estimate.get("credits_after_discount"), request=request)

    def attach(
        self,
        generation: Generation[Any],
        *,
        reserved: float | None = None,
        request: dict[str, Any] | None = None,
    ) -> JobCard:
        """Show a card for ``generation`` (newest first) and follow it until it ends.

        A generation already shown (an idempotent replay of the same click) keeps its card.
        """
        for existing in self.cards:
            if existing.generation.get("id") == generation.id:
                return existing
        card = JobCard(
            self.client,
            generation,
            reserved=reserved,
            request=request,
            save_dir=self.save_folder,
            poll_interval=self.poll_interval,
        )
        card.on_finished(lambda generation: self._on_finished(generation, card.request))
        card.on_reference(self._use_reference)
        self.cards.insert(0, card)
        self.card_refs = [widget_ref(c) for c in self.cards]
        return card

    def _on_finished(
        self, generation: Generation[Any], request: dict[str, Any] | None = None
    ) -> None:
        self.last = generation
        self.last_id = generation.id
        self.meter.generation_finished(generation)
        _tasks.spawn(
            self.gallery.add_with_outputs(generation, request=request),
            reporter=lambda exc: self.gallery.report(exc, context="Gallery"),
        )
        if generation.completed:
            self.estimate.refresh()

    @property
    def save_dir(self) -> Path:
        """The folder Save writes into (also the "Save folder" box in the studio)."""
        return Path(self.save_folder)

    @save_dir.setter
    def save_dir(self, value: str | Path) -> None:
        self.save_folder = str(Path(value).expanduser().resolve())

    @traitlets.observe("save_folder")
    def _on_save_folder(self, change: Any) -> None:
        for card in self.cards:
            card.save_dir = str(Path(change["new"]).expanduser().resolve())

    def _use_reference(self, asset_id: str, label: str, kind: str) -> str:
        used = self.form.choose_reference(asset_id, label, kind)
        if used is None:
            return f"It will fill the {kind} input of the next model or mode that takes one."
        return f"It fills {self.form.label_of(used)} of {self.form.model_name}."

    def snapshot_text(self) -> str:
        balance = (self.balance.credits or {}).get("balance")
        parts = [f"mediagen studio: {plural(len(self.generations), 'generation')}"]
        if balance is not None:
            parts.append(f"balance {_html.credits_text(balance)} credits")
        return ", ".join(parts)

    def snapshot_html(self) -> str:
        settings = self._gallery.settings() if self._gallery is not None else {}
        settings.update({c.result.id: price_settings(c.request) for c in self.cards})
        return generations_html(self.snapshot_text(), self.generations, settings)


def _arrived(catalog: Awaitable[list[Any]], seconds: float) -> list[Any]:
    """The catalog if it is in within ``seconds`` (only a request already under way on a
    worker thread can be waited for here), else nothing yet."""
    if not isinstance(catalog, _tasks.Handle):
        return []
    try:
        found: list[Any] = catalog.result(timeout=seconds)
        return found
    except Exception:  # late, or failed: ``_start`` awaits it and reports a failure
        return []


def _created(generation: Shown) -> str:
    return generation_summary(generation)["created_at"] or ""


def _polling(start: float | None, cap: float | None) -> tuple[float, float] | None:
    """The job cards' polling: None (the client's) unless one is given; then (start, cap), the
    other as the studio's own default (2 s, 5 s), the cap never below the start."""
    if start is None and cap is None:
        return None
    start = 2.0 if start is None else start
    return (start, max(5.0 if cap is None else cap, start))


def _catalog_started(client: Client | AsyncClient) -> Awaitable[list[Mapping[str, Any]]]:
    """The catalog, asked for now: with a blocking client on a worker thread, so the answer
    travels while the widgets that show it are still being built; await it on the loop.
    An ``AsyncClient`` asks when it is awaited."""
    if not isinstance(client, Client):
        return _catalog(client)
    return _tasks.started(lambda: [m.to_dict() for m in client.models.list()])


async def _catalog(client: AsyncClient) -> list[Mapping[str, Any]]:
    return [m.to_dict() for m in await client.models.list()]


def studio(client: Client | AsyncClient | None = None, **options: Any) -> Studio:
    """A working studio in one cell: ``mediagen.studio()`` (key from ``MEDIAGEN_API_KEY``)."""
    return Studio(client, **options)

"""Spend dashboard: filters, a date range, headline numbers, three plots and a sortable,
searchable, paged table of history.

One anywidget (``static/spend.js``), so it renders wherever anywidget does (JupyterLab,
Notebook 7, VS Code, marimo). Every figure is computed in the kernel and sent as data (the
headline's pairs, the table's cells, the page label); the view only draws them and sends back
what the user chose, as traits. Plots are drawn off-screen (matplotlib Agg figures, no pyplot
state) and sent as PNG data URLs, so nothing leaks into the notebook's own figures; the view
reports when the page is dark (``dark``), and the plots are redrawn to match. Dates are the
user's local dates.

    mediagen.spend_dashboard()                       # or SpendDashboard(client, type="video")

Keeping it current: the rows come from the client's local history store
(``mediagen.history.HistoryStore``), and ``refresh()`` syncs it first, which fetches only what
can have changed (pending generations and newer ones); ``sync=False`` reads the store without
asking the service (offline). Job widgets and watchers call
``dashboard.generation_finished(generation)`` (or pass ``dashboard.generation_finished`` as an
``on_finished`` callback); calls within ``refresh_delay`` seconds are coalesced into one refresh.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import io
import threading
from typing import TYPE_CHECKING, Any

import pandas as pd
import traitlets

from mediagen import history
from mediagen.history.spend import local_timezone
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._snapshot import StaticFallback
from mediagen.widgets._theme import DARK_PLOT_STYLE

if TYPE_CHECKING:
    from mediagen.history._fetch import PageSource

#: the value of a filter that keeps every row
ALL = ""
TABLE_COLUMNS = [
    "created_at",
    "type",
    "model",
    "status",
    "credits_charged",
    "latency_s",
    "n_outputs",
    "error_code",
    "prompt",
]
#: the plots, in their tabs' order: (trait, tab title, the image's alternative text)
PLOTS = (
    ("spend_plot", "Spend over time", "Credits charged per period"),
    ("model_plot", "Spend per model", "Credits charged per model"),
    ("latency_plot", "Latency", "Time to finish per model"),
)
#: the filters the view offers as selects, by trait (their choices are the frame's values)
FILTERS = ("type", "status", "model")
#: columns the table's search looks in
SEARCHED = ("model", "prompt", "id", "error_code", "status", "type")


def format_credits(value: Any) -> str:
    """Credits as the service states them: up to 2 decimals, never rounded further."""
    if value is None or pd.isna(value):
        return "–"
    text = f"{float(value):,.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _png(draw: Any, frame: pd.DataFrame, *, dark: bool = False, **kwargs: Any) -> bytes:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(dict(DARK_PLOT_STYLE) if dark else None):  # type: ignore[arg-type]
        figure = Figure(figsize=(6.4, 3.0), dpi=96, layout="constrained")
        draw(frame, ax=figure.subplots(), **kwargs)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def png_bytes(data_url: str) -> bytes:
    """The PNG a plot trait holds (empty before the plot is drawn)."""
    return base64.b64decode(data_url.partition(",")[2]) if data_url else b""


def _local_dates(times: pd.Series) -> pd.Series:
    return times.dt.tz_convert(local_timezone()).dt.date


def _as_date(value: Any) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None


class IsoDate(traitlets.Unicode):  # type: ignore[type-arg]
    """A local day as an ISO date ("" for none), set as text or as a ``datetime.date``."""

    info_text = "a date (YYYY-MM-DD), a datetime.date, or empty"

    def validate(self, obj: Any, value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, dt.date):
            return value.isoformat()
        text = str(super().validate(obj, value))
        try:
            _as_date(text)
        except ValueError:
            self.error(obj, value)
        return text


class SpendDashboard(StaticFallback, MediagenWidget):
    """What was spent, on what, and what failed, for one client's key owner.

    ``client``: a ``mediagen.Client`` (or a page source: ``mediagen.history._fetch.PageSource``;
    None with ``frame`` for an offline view of a saved history). ``filters`` scope the rows like
    ``client.generations.to_dataframe``; the dashboard's own filters (``type``, ``status``,
    ``model``, ``since``, ``until``: set them here or in the view) then narrow them locally,
    instantly. ``sync=False`` shows the local history store as it is, without asking the service
    (nor for the balance).
    """

    _module = "spend.js"

    # what the user chooses (the view sets these; so may the notebook)
    type = traitlets.Unicode(ALL).tag(sync=True)
    status = traitlets.Unicode(ALL).tag(sync=True)
    model = traitlets.Unicode(ALL).tag(sync=True)
    #: the spend plot's period: "D", "W" or "M"
    period = traitlets.Enum(("D", "W", "M"), "D").tag(sync=True)
    #: the first and last local day kept (ISO dates; "" for no bound; a ``date`` is taken too)
    since = IsoDate().tag(sync=True)
    until = IsoDate().tag(sync=True)
    search = traitlets.Unicode("").tag(sync=True)
    sort_by = traitlets.Enum(TABLE_COLUMNS, "created_at").tag(sync=True)
    descending = traitlets.Bool(True).tag(sync=True)
    page = traitlets.Int(0).tag(sync=True)
    #: the plot tab shown (an index into ``PLOTS``)
    plot_tab = traitlets.Int(0).tag(sync=True)
    #: whether the page is dark (the view reports it)
    dark = traitlets.Bool(False).tag(sync=True)

    # what the kernel computed for the view to draw
    #: the values each filter offers: {"type": [...], "status": [...], "model": [...]}
    choices = traitlets.Dict().tag(sync=True)
    #: the headline figures, in order: [{"label", "value"}]
    headline = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: one page of the table: {"columns": [...], "rows": [[cell text, ...]]}
    table = traitlets.Dict().tag(sync=True)
    page_count = traitlets.Int(1).tag(sync=True)
    page_label = traitlets.Unicode("").tag(sync=True)
    spend_plot = traitlets.Unicode("").tag(sync=True)
    model_plot = traitlets.Unicode("").tag(sync=True)
    latency_plot = traitlets.Unicode("").tag(sync=True)
    #: "Refreshing…", "Updated 14:02:11 CET" or what went wrong
    status_line = traitlets.Unicode("").tag(sync=True)
    refreshing = traitlets.Bool(False).tag(sync=True)

    def __init__(
        self,
        client: PageSource | None = None,
        *,
        frame: pd.DataFrame | None = None,
        page_size: int = 15,
        refresh_delay: float = 0.5,
        sync: bool = True,
        **filters: Any,
    ) -> None:
        super().__init__()
        self._client = client
        self._filters = filters
        self.sync = sync
        self._frame = frame
        self._credits: Any = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.refresh_delay = refresh_delay
        self.page_size = page_size
        # Drawing a plot costs ~0.3 s, so only the visible tab is drawn; others when selected.
        self._stale_plots: set[int] = set()
        self.observe(
            self._on_filter,
            names=[*FILTERS, "period", "since", "until", "search", "sort_by", "descending"],
        )
        self.observe(lambda _: self.show_page(self.page), names="page")
        self.observe(lambda _: self._draw_visible_plot(), names="plot_tab")
        self.observe(self._on_theme, names="dark")
        self.on_msg(self._on_message)
        if frame is not None:
            self._render()
        elif client is not None:
            self.refresh()

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("action") == "refresh":
            self.refresh()

    # -- data ----------------------------------------------------------------------------

    @property
    def frame(self) -> pd.DataFrame | None:
        """The whole history fetched so far (before the dashboard's own filters)."""
        return self._frame

    @property
    def filtered(self) -> pd.DataFrame:
        """The rows the filters and the date range (local dates, both ends included) select."""
        frame = self._frame
        if frame is None:
            return pd.DataFrame()
        mask = pd.Series(True, index=frame.index)
        for column in FILTERS:
            chosen = getattr(self, column)
            if chosen != ALL:
                mask &= frame[column].astype(object) == chosen
        since, until = _as_date(self.since), _as_date(self.until)
        if since is not None or until is not None:
            days = _local_dates(frame["created_at"])
            if since is not None:
                mask &= days >= since
            if until is not None:
                mask &= days <= until
        return frame[mask]

    @property
    def table_rows(self) -> pd.DataFrame:
        """The filtered rows the search keeps, in the table's sort order (all pages)."""
        rows = self.filtered
        words = self.search.lower().split()
        if words and len(rows):
            columns = [c for c in SEARCHED if c in rows.columns]
            text = rows[columns].astype("string").fillna("").agg(" ".join, axis=1).str.lower()
            for word in words:
                rows = rows[text.loc[rows.index].str.contains(word, regex=False)]
        if self.sort_by in rows.columns:
            rows = rows.sort_values(self.sort_by, ascending=not self.descending, na_position="last")
        return rows

    def refresh(self, full: bool = False) -> None:
        """Sync what changed and redraw; ``full`` forgets the store and fetches everything."""
        if self._client is None:
            self._render()
            return
        with self._lock:
            self.refreshing = True
            self.status_line = "Refreshing…"
            failed: Exception | None = None
            try:
                self._frame = self._rows(self._client, full)
                credits_resource = getattr(self._client, "credits", None) if self.sync else None
                self._credits = credits_resource.get() if credits_resource is not None else None
            except Exception as exc:  # shown, not raised: this may run from a click
                failed = exc
            # the figures, the filters' new choices, the status and the button's return in
            # one message: the button comes back clickable with the layout it sits in, not
            # before the choices widen the filters beside it and move it under the pointer
            with self.hold_sync():
                try:
                    if failed is not None:
                        self.status_line = f"Refresh failed: {type(failed).__name__}: {failed}"
                    else:
                        self._render()
                        stamp = dt.datetime.now().astimezone().strftime("%H:%M:%S %Z")
                        self.status_line = f"Updated {stamp}"
                finally:
                    self.refreshing = False

    def _rows(self, client: PageSource, full: bool) -> pd.DataFrame:
        from mediagen.client import AsyncClient, Client

        if isinstance(client, Client | AsyncClient) and history.store_for(client) is not None:
            return history.stored_frame(client, sync=self.sync, rebuild=full, **self._filters)
        # a page source without a store of its own: fetched, then updated incrementally
        if full or self._frame is None:
            return history.generations_frame(client, **self._filters)
        return history.update_frame(client, self._frame, **self._filters)

    def generation_finished(self, generation: Any = None) -> None:
        """Hook for job widgets and watchers: a generation finished, refresh soon.

        Calls within ``refresh_delay`` seconds are coalesced into one refresh (a batch of 500
        finishing costs one incremental fetch, not 500). ``refresh_delay=0`` refreshes now.
        """
        if self.refresh_delay <= 0:
            self.refresh()
            return
        with self._lock:
            if self._timer is not None and self._timer.is_alive():
                return
            self._timer = threading.Timer(self.refresh_delay, self._timed_refresh)
            self._timer.daemon = True
            self._timer.start()

    def _timed_refresh(self) -> None:
        with self._lock:
            self._timer = None
        self.refresh()

    def wait_for_refresh(self, timeout: float | None = None) -> None:
        """Block until a refresh scheduled by ``generation_finished`` has run (scripts, tests)."""
        timer = self._timer
        if timer is not None:
            timer.join(timeout)
        with self._lock:  # the refresh itself holds the lock
            pass

    # -- rendering -----------------------------------------------------------------------

    def _on_filter(self, change: Any) -> None:
        if self.page:
            self.page = 0  # redraws the table
        self._render()

    def _on_theme(self, change: Any) -> None:
        if self._frame is not None:
            self._stale_plots = {0, 1, 2}
            self._draw_visible_plot()

    def _sync_choices(self) -> None:
        frame = self._frame
        if frame is None:
            return
        choices = {c: sorted(str(v) for v in frame[c].dropna().unique()) for c in FILTERS}
        if choices != self.choices:
            self.choices = choices

    def _render(self) -> None:
        self._sync_choices()
        if self._frame is None:
            return
        self._render_headline(self.filtered)
        self._stale_plots = {0, 1, 2}
        self._draw_visible_plot()
        self.show_page(self.page)

    def draw_plots(self) -> None:
        """Draw every plot now (normally each is drawn when its tab is first shown)."""
        for index in sorted(self._stale_plots):
            self._draw_plot(index)

    def _draw_visible_plot(self) -> None:
        if self.plot_tab in self._stale_plots:
            self._draw_plot(self.plot_tab)

    def _draw_plot(self, index: int) -> None:
        rows, dark = self.filtered, self.dark
        if index == 0:
            png = _png(history.plot_spend_over_time, rows, dark=dark, freq=self.period)
        elif index == 1:
            png = _png(history.plot_spend_by_model, rows, dark=dark)
        else:
            png = _png(history.plot_latency, rows, dark=dark)
        setattr(self, PLOTS[index][0], _data_url(png))
        self._stale_plots.discard(index)

    def _render_headline(self, rows: pd.DataFrame) -> None:
        numbers = history.headline(rows, self._credits)
        rate = numbers["failure_rate"]
        items = [
            ("Spent", format_credits(numbers["spent"]) + " credits"),
            (
                "Generations",
                f"{numbers['generations']} ({numbers['completed']} completed, "
                f"{numbers['failed']} failed, {numbers['pending']} pending)",
            ),
            ("Failure rate", "–" if pd.isna(rate) else f"{rate:.1%}"),
            ("Refunded", format_credits(numbers["refunded"])),
            ("Reserved", format_credits(numbers["reserved_pending"])),
        ]
        if "cap" in numbers:
            items.append(
                (
                    "Member cap",
                    f"{format_credits(numbers['cap_used'])} of {format_credits(numbers['cap'])}"
                    f" used, {format_credits(numbers['cap_remaining'])} left",
                )
            )
        elif "balance" in numbers:
            items.append(("Balance", format_credits(numbers["balance"])))
        self.headline = [{"label": label, "value": value} for label, value in items]

    @property
    def page_size(self) -> int:
        """Rows on a page of the table."""
        return self._page_size

    @page_size.setter
    def page_size(self, value: int) -> None:
        if value < 1:
            raise ValueError(f"page_size must be at least 1, not {value!r}")
        self._page_size = value

    def _page_count(self, rows: int) -> int:
        return max(1, -(-rows // self.page_size))

    def show_page(self, page: int) -> None:
        """Show one page of the table (0-based; clamped to the pages there are)."""
        rows = self.table_rows
        count = self._page_count(len(rows))
        clamped = max(0, min(page, count - 1))
        if clamped != self.page:
            self.page = clamped  # this method again, through the trait's observer
            return
        start = clamped * self.page_size
        view = rows.iloc[start : start + self.page_size]
        view = view[[c for c in TABLE_COLUMNS if c in view.columns]]
        self.table = {"columns": list(view.columns), "rows": _cells(view)}
        self.page_count = count
        self.page_label = f"page {clamped + 1} of {count} ({len(rows)} rows)"

    # -- static fallback -------------------------------------------------------------------

    def snapshot_text(self) -> str:
        rows = self.filtered
        if self._frame is None:
            return "Spend dashboard (no history loaded)"
        spent = format_credits(history.headline(rows, self._credits)["spent"])
        return f"Spend dashboard: {len(rows)} generations, {spent} credits spent"

    def snapshot_html(self) -> str:
        plot = self.spend_plot or (
            _data_url(_png(history.plot_spend_over_time, self.filtered, freq=self.period))
            if self._frame is not None
            else ""
        )
        image = f'<img alt="{PLOTS[0][2]}" style="max-width:100%" src="{plot}">' if plot else ""
        return f"{headline_html(self.headline)}{image}{table_html(self.table)}"


def _cells(view: pd.DataFrame) -> list[list[str]]:
    """The table's cells as a reader sees them: local clock times, a tenth of a second, the
    first 60 characters of a prompt, nothing for a missing value."""
    shown = pd.DataFrame(index=view.index)
    for column in view.columns:
        values = view[column]
        if column == "created_at":
            shown[column] = values.dt.tz_convert(local_timezone()).dt.strftime("%Y-%m-%d %H:%M")
        elif column == "latency_s":
            shown[column] = ["" if pd.isna(v) else f"{v:.1f} s" for v in values.tolist()]
        elif column == "prompt":
            shown[column] = values.astype("string").str.slice(0, 60)
        else:
            shown[column] = values.astype("string")
    return [["" if pd.isna(v) else str(v) for v in row] for row in shown.itertuples(index=False)]


def headline_html(items: list[dict[str, str]]) -> str:
    """The headline figures for a saved notebook (inline styles: it has no stylesheet)."""
    cells = "".join(
        '<div style="padding:4px 12px;border-left:2px solid var(--jp-brand-color1, #1976d2)">'
        f'<div style="font-size:0.85em;color:var(--jp-ui-font-color2, #666)">'
        f"{html.escape(item['label'])}</div>"
        f'<div style="font-size:1.15em">{html.escape(item["value"])}</div></div>'
        for item in items
    )
    return (
        '<div role="group" aria-label="Spend summary" style="display:flex;flex-wrap:wrap;'
        "gap:8px;font-family:var(--jp-ui-font-family, sans-serif);"
        f'color:var(--jp-ui-font-color1, #222)">{cells}</div>'
    )


def table_html(table: dict[str, Any]) -> str:
    """One page of the table for a saved notebook."""
    if not table:
        return ""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table["columns"])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
        for row in table["rows"]
    )
    return (
        '<div style="overflow-x:auto;font-family:var(--jp-ui-font-family, sans-serif)">'
        f'<table class="jp-RenderedHTMLCommon"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def spend_dashboard(client: PageSource | None = None, **kwargs: Any) -> SpendDashboard:
    """Build a ``SpendDashboard`` (see its docstring)."""
    return SpendDashboard(client, **kwargs)

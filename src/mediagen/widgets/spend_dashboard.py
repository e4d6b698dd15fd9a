"""Spend dashboard: filters, a date range, headline numbers, three plots and a sortable,
searchable, paged table of history.

Built from plain ipywidgets containers so it works wherever ipywidgets 8 does. All logic runs
in the kernel; the front end only renders. Plots are drawn off-screen (matplotlib Agg figures,
no pyplot state) and shown as PNG images, so nothing leaks into the notebook's own figures; an
invisible :class:`ThemeProbe` says when the page is dark, and the plots are redrawn to match.
Dates are the user's local dates.

    mediagen.spend_dashboard()                       # or SpendDashboard(client, type="video")

Keeping it current: the rows come from the client's local history store
(``mediagen.history.HistoryStore``), and ``refresh()`` syncs it first, which fetches only what
can have changed (pending generations and newer ones); ``sync=False`` reads the store without
asking the service (offline). Job widgets and watchers call
``dashboard.generation_finished(generation)`` (or pass ``dashboard.generation_finished`` as an
``on_finished`` callback); calls within ``refresh_delay`` seconds are coalesced into one refresh.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import io
import threading
from typing import TYPE_CHECKING, Any

import ipywidgets as w
import pandas as pd

from mediagen import history
from mediagen.history.spend import local_timezone
from mediagen.widgets._snapshot import StaticFallback
from mediagen.widgets._theme import DARK_PLOT_STYLE, ThemeProbe

if TYPE_CHECKING:
    from mediagen.history._fetch import PageSource

ALL = "(all)"
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
_FREQ_OPTIONS = [("day", "D"), ("week", "W"), ("month", "M")]


def format_credits(value: Any) -> str:
    """Credits as the service states them: up to 2 decimals, never rounded further."""
    if value is None or pd.isna(value):
        return "–"
    text = f"{float(value):,.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


#: columns the table's search looks in
SEARCHED = ("model", "prompt", "id", "error_code", "status", "type")


def _png(draw: Any, frame: pd.DataFrame, *, dark: bool = False, **kwargs: Any) -> bytes:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(dict(DARK_PLOT_STYLE) if dark else None):  # type: ignore[arg-type]
        figure = Figure(figsize=(6.4, 3.0), dpi=96, layout="constrained")
        draw(frame, ax=figure.subplots(), **kwargs)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png")
    return buffer.getvalue()


def _local_dates(times: pd.Series) -> pd.Series:
    return times.dt.tz_convert(local_timezone()).dt.date


class SpendDashboard(StaticFallback, w.VBox):  # type: ignore[misc]  # ipywidgets: no hints
    """What was spent, on what, and what failed, for one client's key owner.

    ``client``: a ``mediagen.Client`` (or a page source: ``mediagen.history._fetch.PageSource``;
    None with ``frame`` for an offline view of a saved history). ``filters`` scope the rows like
    ``client.generations.to_dataframe``; the dropdowns then filter locally, instantly.
    ``sync=False`` shows the local history store as it is, without asking the service (nor for
    the balance).
    """

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
        self._client = client
        self._filters = filters
        self.sync = sync
        self._frame = frame
        self._credits: Any = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.refresh_delay = refresh_delay
        self.page_size = page_size
        self.page = 0

        def dropdown(label: str) -> w.Dropdown:
            return w.Dropdown(
                options=[ALL], value=ALL, description=label, layout=w.Layout(width="200px")
            )

        self.type_filter = dropdown("Type")
        self.status_filter = dropdown("Status")
        self.model_filter = dropdown("Model")
        self.period = w.Dropdown(
            options=_FREQ_OPTIONS, value="D", description="Per", layout=w.Layout(width="160px")
        )
        self.since = w.DatePicker(description="From", layout=w.Layout(width="230px"))
        self.until = w.DatePicker(description="To", layout=w.Layout(width="230px"))
        self.search = w.Text(
            placeholder="Search model, prompt, id, error…",
            description="Search",
            continuous_update=False,
            layout=w.Layout(width="320px"),
        )
        self.sort_by = w.Dropdown(
            options=TABLE_COLUMNS,
            value="created_at",
            description="Sort by",
            layout=w.Layout(width="220px"),
        )
        self.descending = w.Checkbox(value=True, description="Descending", indent=False)
        self.theme = ThemeProbe()
        self.refresh_button = w.Button(
            description="Refresh", icon="refresh", tooltip="Fetch new and finished generations"
        )
        self.status_line = w.HTML()
        self.headline = w.HTML()
        self.spend_plot = w.Image(format="png")
        self.model_plot = w.Image(format="png")
        self.latency_plot = w.Image(format="png")
        self.table = w.HTML()
        self.prev_button = w.Button(description="Previous", icon="chevron-left")
        self.next_button = w.Button(description="Next", icon="chevron-right")
        self.page_label = w.Label()

        for control in (
            self.type_filter,
            self.status_filter,
            self.model_filter,
            self.period,
            self.since,
            self.until,
            self.search,
            self.sort_by,
            self.descending,
        ):
            control.observe(self._on_filter, names="value")
        self.theme.observe(self._on_theme, names="dark")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.prev_button.on_click(lambda _: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _: self.show_page(self.page + 1))

        self.plots = plots = w.Tab(children=[self.spend_plot, self.model_plot, self.latency_plot])
        for index, title in enumerate(["Spend over time", "Spend per model", "Latency"]):
            plots.set_title(index, title)
        plots.selected_index = 0
        # Drawing a plot costs ~0.3 s, so only the visible tab is drawn; others when selected.
        self._stale_plots: set[int] = set()
        plots.observe(lambda _: self._draw_visible_plot(), names="selected_index")
        super().__init__(
            children=[
                w.HBox(
                    [
                        self.type_filter,
                        self.status_filter,
                        self.model_filter,
                        self.period,
                        self.refresh_button,
                    ],
                    layout=w.Layout(flex_flow="row wrap"),
                ),
                w.HBox([self.since, self.until], layout=w.Layout(flex_flow="row wrap")),
                self.headline,
                plots,
                w.HBox(
                    [self.search, self.sort_by, self.descending],
                    layout=w.Layout(flex_flow="row wrap"),
                ),
                self.table,
                w.HBox([self.prev_button, self.page_label, self.next_button]),
                self.status_line,
                self.theme,
            ]
        )
        self.add_class("mediagen-spend-dashboard")
        if frame is not None:
            self._render()
        elif client is not None:
            self.refresh()

    # -- data ----------------------------------------------------------------------------

    @property
    def frame(self) -> pd.DataFrame | None:
        """The whole history fetched so far (before the dropdown filters)."""
        return self._frame

    @property
    def filtered(self) -> pd.DataFrame:
        """The rows the dropdowns and the date range (local dates, both ends included) select."""
        frame = self._frame
        if frame is None:
            return pd.DataFrame()
        mask = pd.Series(True, index=frame.index)
        for column, control in (
            ("type", self.type_filter),
            ("status", self.status_filter),
            ("model", self.model_filter),
        ):
            if control.value != ALL:
                mask &= frame[column].astype(object) == control.value
        if self.since.value is not None or self.until.value is not None:
            days = _local_dates(frame["created_at"])
            if self.since.value is not None:
                mask &= days >= self.since.value
            if self.until.value is not None:
                mask &= days <= self.until.value
        return frame[mask]

    @property
    def table_rows(self) -> pd.DataFrame:
        """The filtered rows the search keeps, in the table's sort order (all pages)."""
        rows = self.filtered
        words = self.search.value.lower().split()
        if words and len(rows):
            columns = [c for c in SEARCHED if c in rows.columns]
            text = rows[columns].astype("string").fillna("").agg(" ".join, axis=1).str.lower()
            for word in words:
                rows = rows[text.loc[rows.index].str.contains(word, regex=False)]
        if self.sort_by.value in rows.columns:
            rows = rows.sort_values(
                self.sort_by.value, ascending=not self.descending.value, na_position="last"
            )
        return rows

    def refresh(self, full: bool = False) -> None:
        """Sync what changed and redraw; ``full`` forgets the store and fetches everything."""
        if self._client is None:
            self._render()
            return
        with self._lock:
            self.status_line.value = "<i>Refreshing…</i>"
            try:
                self._frame = self._rows(self._client, full)
                credits_resource = getattr(self._client, "credits", None) if self.sync else None
                self._credits = credits_resource.get() if credits_resource is not None else None
            except Exception as exc:  # shown, not raised: this may run from a callback
                self.status_line.value = html.escape(f"Refresh failed: {type(exc).__name__}: {exc}")
                return
            self._render()
            stamp = dt.datetime.now().astimezone().strftime("%H:%M:%S %Z")
            self.status_line.value = f"<small>Updated {stamp}</small>"

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
        self.page = 0
        self._render()

    def _on_theme(self, change: Any) -> None:
        if self._frame is not None:
            self._stale_plots = {0, 1, 2}
            self._draw_visible_plot()

    def _sync_options(self) -> None:
        frame = self._frame
        if frame is None:
            return
        for column, control in (
            ("type", self.type_filter),
            ("status", self.status_filter),
            ("model", self.model_filter),
        ):
            seen = sorted(str(v) for v in frame[column].dropna().unique())
            options = [ALL, *seen]
            if list(control.options) != options:
                value = control.value if control.value in options else ALL
                with control.hold_trait_notifications():
                    control.options = options
                    control.value = value

    def _render(self) -> None:
        self._sync_options()
        rows = self.filtered
        if self._frame is None:
            return
        self._render_headline(rows)
        self._stale_plots = {0, 1, 2}
        self._draw_visible_plot()
        self.show_page(min(self.page, self.page_count - 1))

    def draw_plots(self) -> None:
        """Draw every plot now (normally each is drawn when its tab is first shown)."""
        for index in sorted(self._stale_plots):
            self._draw_plot(index)

    def _draw_visible_plot(self) -> None:
        index = self.plots.selected_index
        if index is not None and index in self._stale_plots:
            self._draw_plot(index)

    def _draw_plot(self, index: int) -> None:
        rows, dark = self.filtered, self.theme.dark
        if index == 0:
            self.spend_plot.value = _png(
                history.plot_spend_over_time, rows, dark=dark, freq=self.period.value
            )
        elif index == 1:
            self.model_plot.value = _png(history.plot_spend_by_model, rows, dark=dark)
        else:
            self.latency_plot.value = _png(history.plot_latency, rows, dark=dark)
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
        cells = "".join(
            '<div style="padding:4px 12px;border-left:2px solid '
            'var(--jp-brand-color1, #1976d2)">'
            f'<div style="font-size:0.85em;color:var(--jp-ui-font-color2, #666)">'
            f"{html.escape(label)}</div>"
            f'<div style="font-size:1.15em">{html.escape(value)}</div></div>'
            for label, value in items
        )
        self.headline.value = (
            '<div role="group" aria-label="Spend summary" style="display:flex;flex-wrap:wrap;'
            "gap:8px;font-family:var(--jp-ui-font-family, sans-serif);"
            f'color:var(--jp-ui-font-color1, #222)">{cells}</div>'
        )

    @property
    def page_count(self) -> int:
        """How many pages the table has at its page size."""
        return max(1, -(-len(self.table_rows) // self.page_size))

    def show_page(self, page: int) -> None:
        """Show one page of the table (0-based; clamped to the pages there are)."""
        rows = self.table_rows
        self.page = max(0, min(page, self.page_count - 1))
        start = self.page * self.page_size
        view = rows.iloc[start : start + self.page_size]
        view = view[[c for c in TABLE_COLUMNS if c in view.columns]].copy()
        if "prompt" in view:
            view["prompt"] = view["prompt"].str.slice(0, 60)
        if "latency_s" in view:  # a tenth of a second is what a reader compares
            view["latency_s"] = [
                "" if pd.isna(v) else f"{v:.1f} s" for v in view["latency_s"].tolist()
            ]
        if "created_at" in view:  # local time, as the user reads a clock
            local = view["created_at"].dt.tz_convert(local_timezone())
            view["created_at"] = local.dt.strftime("%Y-%m-%d %H:%M")
        self.table.value = (
            '<div style="overflow-x:auto;font-family:var(--jp-ui-font-family, sans-serif)">'
            + view.to_html(index=False, na_rep="", border=0, classes="jp-RenderedHTMLCommon")
            + "</div>"
        )
        self.page_label.value = f"page {self.page + 1} of {self.page_count} ({len(rows)} rows)"
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= self.page_count - 1

    # -- static fallback -------------------------------------------------------------------

    def snapshot_text(self) -> str:
        rows = self.filtered
        if self._frame is None:
            return "Spend dashboard (no history loaded)"
        spent = format_credits(history.headline(rows, self._credits)["spent"])
        return f"Spend dashboard: {len(rows)} generations, {spent} credits spent"

    def snapshot_html(self) -> str:
        import base64

        plot = ""
        with contextlib.suppress(Exception):  # a snapshot never breaks the display
            if self._frame is not None:
                png = _png(history.plot_spend_over_time, self.filtered, freq=self.period.value)
                plot = (
                    f'<img alt="Credits charged per period" style="max-width:100%"'
                    f' src="data:image/png;base64,{base64.b64encode(png).decode()}">'
                )
        return f"{self.headline.value}{plot}{self.table.value}"


def spend_dashboard(client: PageSource | None = None, **kwargs: Any) -> SpendDashboard:
    """Build a ``SpendDashboard`` (see its docstring)."""
    return SpendDashboard(client, **kwargs)

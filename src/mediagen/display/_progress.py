"""Progress for long operations: a progress-bar widget in a notebook, plain text elsewhere.

Why one small module: every long operation a notebook user starts (a foreground wait, a history
fetch over many pages, a batch submit, downloads) should say what it is doing, and the same code
must also run in a terminal IPython, a script or a test where there is no widget front end.

``Progress`` picks its display once, when created:

- **widget** (inside a Jupyter kernel): a bar and a line of text (``ProgressBar``, an
  anywidget, so every Jupyter front end draws it), shown through a display handle. When the
  operation ends the widget is *replaced* by a static one-line summary (text and HTML), so a
  saved notebook keeps a readable result and no widget state.
- **marimo** (in a marimo notebook's cell): marimo's own progress bar (a spinner while the
  amount of work is unknown), replaced by the same summary when the operation ends.
- **text** (everywhere else): one line per meaningful change on ``stderr`` (throttled), and a
  final line.

anywidget, IPython and marimo are imported only when their display is actually made, so importing
this module costs nothing in a plain script.

Usage::

    with Progress("Fetching history", unit="page") as bar:
        for page in pages:
            bar.advance(message=f"{rows} rows")
    # or, for a client callback: client.generations.wait(gen, progress=generation_callback(bar))
"""

from __future__ import annotations

import datetime as dt
import html
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, Literal, TextIO

from mediagen.wire._fields import read_field

Mode = Literal["auto", "widget", "marimo", "text", "off"]

#: Seconds between two text lines that only report a count or elapsed time.
TEXT_THROTTLE_SECONDS = 1.0


def in_notebook() -> bool:
    """True inside a Jupyter kernel whose front end can show the bar (anywidget installed:
    the ``notebook`` extra).

    A terminal IPython, a script and ``InteractiveShell`` in tests all answer False.
    """
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None:
        return False
    shell = ipython_module.get_ipython()
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return False
    return importlib.util.find_spec("anywidget") is not None


def in_marimo() -> bool:
    """True while a marimo notebook runs this process's cells (not ``python notebook.py``)."""
    marimo = sys.modules.get("marimo")
    if marimo is None:
        return False
    try:
        return bool(marimo.running_in_notebook())
    except Exception:  # an older marimo, or one half imported
        return False


def format_seconds(seconds: float) -> str:
    """``4.2 s``, ``3 min 05 s``, ``1 h 02 min``: short, for humans."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _instant(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def typical_seconds(spans: Iterable[tuple[Any, Any]]) -> float | None:
    """The median of ``end - start`` over (start, end) pairs (datetimes or ISO strings)."""
    durations = []
    for start, end in spans:
        begin, finish = _instant(start), _instant(end)
        if begin is not None and finish is not None and finish >= begin:
            durations.append((finish - begin).total_seconds())
    return statistics.median(durations) if durations else None


def expected_seconds(journal: Any, model: str | None) -> float | None:
    """How long ``model`` usually takes here: the median time from submit to finish of this
    machine's completed generations of that model, from the client's journal (None if none).

    A wait is only an estimate's guess: it tells the user whether 40 s of "pending" is normal.
    """
    if journal is None or not model:
        return None
    version = _file_version(getattr(journal, "path", None))
    if version is not None and _expected_cache.get((version, model), _MISSING) is not _MISSING:
        return _expected_cache[(version, model)]
    submitted: dict[str, Any] = {}
    spans: dict[str, tuple[Any, Any]] = {}  # one per generation, however often it was journaled
    try:
        records = list(journal.iter_records())
    except OSError:
        return None
    for record in records:
        gid = record.get("generation_id")
        if not gid or record.get("model") != model:
            continue
        if record.get("event") == "submitted":
            submitted.setdefault(gid, record.get("at"))
        elif record.get("status") == "completed":  # a "finished" record, or a folded one
            start = record.get("submitted_at") or submitted.pop(gid, None)
            if start is not None:
                spans.setdefault(gid, (start, record.get("at")))
    expected = typical_seconds(list(spans.values()))
    if version is not None:
        if len(_expected_cache) > 256:
            _expected_cache.clear()
        _expected_cache[(version, model)] = expected
    return expected


_MISSING = object()
#: (journal file version, model) -> expected seconds: a journal is read once per change, not
#: once per job card (it grows by a few lines per generation, and can hold many thousands).
_expected_cache: dict[tuple[Any, str], float | None] = {}


def _file_version(path: Any) -> tuple[str, int, int] | None:
    """The file's identity and state (path, size, mtime): changes whenever a line is added."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (str(path), stat.st_size, stat.st_mtime_ns)


class ProgressSummary:
    """The final line of a progress display, shown in place of the live bar.

    A plain object with text and HTML reprs: it is what a saved notebook keeps.
    """

    def __init__(self, text: str, *, ok: bool = True) -> None:
        self.text = text
        self.ok = ok

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        color = "var(--jp-success-color1, #388e3c)" if self.ok else "var(--jp-warn-color1, #f57c00)"
        mark = "&#10003;" if self.ok else "&#9888;"
        return (
            '<div class="mediagen-progress-summary" style="font-family: '
            "var(--jp-ui-font-family, sans-serif); font-size: var(--jp-ui-font-size1, 13px); "
            f'color: var(--jp-ui-font-color1, inherit)"><span style="color: {color}">{mark}</span> '
            f"{html.escape(self.text)}</div>"
        )


class Progress:
    """A progress display for one long operation (see the module docstring).

    ``total`` None means the amount of work is unknown (a wait): the display then shows the
    message and the elapsed time, and with ``expected`` (seconds, e.g. from
    :func:`expected_seconds`) the bar fills towards it, never to the end before the work is
    done. Without it the bar stays empty: a full bar reads as "done". ``mode`` forces
    ``"widget"``, ``"text"`` or ``"off"``.
    """

    def __init__(
        self,
        description: str,
        total: int | None = None,
        *,
        unit: str = "",
        mode: Mode = "auto",
        stream: TextIO | None = None,
        expected: float | None = None,
    ) -> None:
        self.description = description
        self.expected = expected if expected and expected > 0 else None
        self.total = total
        self.unit = unit
        self.done = 0
        self.message = ""
        self.closed = False
        self.started = time.monotonic()
        self._stream = stream
        self._last_text_at = 0.0
        self._last_text_key: tuple[Any, ...] | None = None
        if mode == "auto":
            mode = "widget" if in_notebook() else "marimo" if in_marimo() else "text"
        self.mode: Mode = mode
        self._widget: Any = None
        self._handle: Any = None
        self._status: Any = None  # marimo's indicator (its context manager)
        if mode == "widget":
            self._make_widget()
        elif mode == "marimo":
            self._make_status()
        self._render(force=True)

    # -- public API -------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        """Seconds since the display was created."""
        return time.monotonic() - self.started

    def update(
        self, done: int | None = None, *, total: int | None = None, message: str | None = None
    ) -> None:
        """Set the amount done (and optionally the total and the message) and redraw."""
        if self.closed:
            return
        if total is not None:
            self.total = total
        if done is not None:
            self.done = done
        if message is not None:
            self.message = message
        self._render()

    def advance(self, step: int = 1, *, message: str | None = None) -> None:
        """Add ``step`` to the amount done."""
        self.update(self.done + step, message=message)

    def close(self, summary: str | None = None, *, ok: bool = True) -> None:
        """End the display, leaving ``summary`` (default: what was done and how long it took)."""
        if self.closed:
            return
        self.closed = True
        text = summary or self._default_summary()
        if self.mode == "widget":
            self._handle.update(ProgressSummary(text, ok=ok))
            self._widget.close()
        elif self.mode == "marimo":
            import marimo

            if not self._indicator.closed:  # a re-run cell may have closed it already
                self._status.__exit__(None, None, None)  # removes it from the cell's output
            marimo.output.append(ProgressSummary(f"{self.description}: {text}", ok=ok))
        elif self.mode == "text":
            print(f"{self.description}: {text}", file=self._out(), flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()
            return
        elapsed = format_seconds(self.elapsed)
        if issubclass(exc_type, KeyboardInterrupt):
            what = f"interrupted after {elapsed}"
        else:
            what = f"stopped by {exc_type.__name__} after {elapsed}"
        self.close(" · ".join(p for p in (self._counts(), what) if p), ok=False)

    # -- drawing ----------------------------------------------------------------------------

    def _out(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def _counts(self) -> str:
        count = self.total if self.total is not None else self.done
        unit = f" {self.unit}{'s' if count != 1 else ''}" if self.unit else ""
        if self.total is not None:
            return f"{self.done}/{self.total}{unit}"
        return f"{self.done}{unit}" if self.done else ""

    def _line(self) -> str:
        parts = [p for p in (self._counts(), self.message) if p]
        elapsed = format_seconds(self.elapsed)
        if self.expected is not None and not self.total:
            elapsed += f" (usually ~{format_seconds(self.expected)})"
        parts.append(elapsed)
        return " · ".join(parts)

    #: the bar's scale for a wait (``total`` None): parts of the expected time
    WAIT_SCALE = 1000

    def _wait_fill(self) -> int:
        """How full a wait's bar is: towards the expected time, at most 95 % until done."""
        if self.expected is None:
            return 0
        share = min(self.elapsed / self.expected, 0.95)
        return int(share * self.WAIT_SCALE)

    def _default_summary(self) -> str:
        parts = [p for p in (self._counts(), self.message) if p]
        parts.append(f"done in {format_seconds(self.elapsed)}")
        return " · ".join(parts)

    def _make_widget(self) -> None:
        from IPython.display import display

        from mediagen.display._bar import ProgressBar

        self._widget = ProgressBar(description=self.description)
        self._handle = display(self._widget, display_id=True)

    def _make_status(self) -> None:
        """marimo's bar when the amount of work is known; else a spinner, or a bar scaled to
        the expected time without marimo's rate and time-left (which would count its scale)."""
        import marimo

        if self.total or self.expected is not None:
            known = bool(self.total)
            self._status = marimo.status.progress_bar(
                total=max(self.total or 0, 1) if known else self.WAIT_SCALE,
                title=self.description,
                show_rate=known,
                show_eta=known,
                remove_on_exit=True,
            )
            self._shown: int | None = 0
        else:
            self._status = marimo.status.spinner(title=self.description, remove_on_exit=True)
            self._shown = None
        self._indicator = self._status.__enter__()

    def _render_marimo(self) -> None:
        """marimo's indicators cannot change kind or be drawn once closed: a spinner whose total
        becomes known turns into a bar, a bar follows a new total, and an indicator marimo
        closed (its cell re-ran) is left alone rather than raising into the caller's work."""
        if self._indicator.closed:
            return
        if self._shown is None and self.total:  # the amount of work is known now
            self._status.__exit__(None, None, None)
            self._make_status()
        if self._shown is None:  # a spinner
            self._indicator.update(subtitle=self._line())
            return
        if self.total and self._indicator.total != max(self.total, 1):
            self._indicator.total = max(self.total, 1)
        shown = min(self.done, self.total) if self.total else self._wait_fill()
        self._indicator.update(increment=shown - self._shown, subtitle=self._line())
        self._shown = shown

    def _render(self, *, force: bool = False) -> None:
        if self.mode == "widget":
            with self._widget.hold_sync():
                if self.total:
                    self._widget.max = max(self.total, 1)
                    self._widget.value = min(self.done, self.total)
                elif self.expected is not None:
                    self._widget.max = self.WAIT_SCALE
                    self._widget.value = self._wait_fill()
                self._widget.line = self._line()
        elif self.mode == "marimo":
            self._render_marimo()
        elif self.mode == "text":
            # A new message or count is always worth a line; elapsed time alone is throttled.
            key = (self.done, self.total, self.message)
            now = time.monotonic()
            if (
                force
                or (
                    key != self._last_text_key
                    and now - self._last_text_at >= TEXT_THROTTLE_SECONDS / 4
                )
                or now - self._last_text_at >= TEXT_THROTTLE_SECONDS * 10
            ):
                self._last_text_at = now
                self._last_text_key = key
                print(f"{self.description}: {self._line()}", file=self._out(), flush=True)


def progress(description: str, total: int | None = None, **kwargs: Any) -> Progress:
    """Shorthand for ``Progress(description, total, ...)``."""
    return Progress(description, total, **kwargs)


def generation_message(generation: Any) -> str:
    """``pending · vidra-2 · 36 credits reserved`` for a Generation (or its dict)."""

    status = read_field(generation, "status") or "?"
    parts = [str(status), str(read_field(generation, "model") or "")]
    charged = read_field(generation, "credits_charged")
    if status == "completed" and charged is not None:
        parts.append(f"{charged} credits charged")
    error = read_field(generation, "error")
    if status == "failed" and error is not None:
        parts.append(f"error {read_field(error, 'code')}")
    return " · ".join(p for p in parts if p)


def generation_callback(bar: Progress) -> Callable[[Any], None]:
    """A callback for the client's ``wait(..., progress=...)`` that redraws ``bar``.

    It accepts the Generation the client just polled (and ignores extra arguments), so it fits
    a callback of either ``f(generation)`` or ``f(generation, elapsed)`` shape.
    """

    def on_poll(generation: Any, *_: Any, **__: Any) -> None:
        bar.update(message=generation_message(generation))

    return on_poll

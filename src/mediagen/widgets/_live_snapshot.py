"""A displayed widget's snapshot, kept in step with the widget, in an output of its own.

A notebook saved after the studio ran three jobs must show those jobs where no widget runs
(nbconvert, GitHub, a notebook reopened without its kernel), not the empty studio it was at
display time. So displaying a mediagen widget in IPython makes *two* outputs:

1. the widget view, with an empty ``text/plain``: where no widget runs the snapshot after it
   says everything, and a line naming the widget above it would only be in the way. This
   output is never updated: an ``update_display_data`` for it makes JupyterLab's widget renderer
   (``WidgetRenderer.renderModel``, reached from ``OutputArea._setOutput``) build a new view,
   and the user loses focus, typing and scroll position;
2. the snapshot (:meth:`StaticFallback.snapshot_html`, and its one line as ``text/plain``)
   under a ``display_id`` of its own. When the state of the widget or of any widget inside it
   changes, the snapshot is drawn again and sent as ``update_display_data``: changes are
   coalesced (the first arms a :data:`UPDATE_DELAY_S` timer; the ones after it ride along)
   and nothing is sent when the drawing is what was sent last. JupyterLab and Notebook 7 put
   the update in the notebook model, so saving keeps what the widget showed at that moment.

While a view of the widget is on the page the snapshot is hidden: the widget carries the class
``mediagen-live-<model id>`` (``_dom_classes``, which the widget manager puts on every view
it renders, anywidget or box alike), and the snapshot (in an element of class
``mediagen-snapshot-of-<model id>``) carries a ``<style>`` that hides its output only while an
element with the live class exists (``:root:has(...)``). No view, no class:
nbconvert's HTML, GitHub, a notebook reopened without saved widget state or after a kernel
restart all show the snapshot. With saved widget state a front end that renders widgets from it
shows that view instead, as it would any widget. The rule sits in the snapshot, keyed on a class
the widget manager applies, so one piece of Python serves every widget and no view's JavaScript
has to know about it. A sanitizer (an untrusted output, GitHub) drops the ``<style>``: there
the snapshot shows, and JupyterLab renders no widget view for an untrusted output anyway.

A page reloaded while the kernel runs shows the live views again but no longer receives the
updates of displays made before the reload (the display ids live in the old page's kernel
connection): that snapshot keeps its state until the cell runs again.

Updates go out under the kernel's current request, not the task that changed the state: that
is where nbclient (``nbconvert --execute``, papermill) listens while a cell runs, and
JupyterLab routes an update by its display id whatever its parent.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Iterator
from typing import Any, Protocol

import ipywidgets
import traitlets

from mediagen.widgets import _tasks

log = logging.getLogger("mediagen.widgets")

#: Changes within this many seconds of the first one go out as one update.
UPDATE_DELAY_S = 0.5
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: The class of the element holding a snapshot (with ``mediagen-snapshot-of-<model id>``).
SNAPSHOT_CLASS = "mediagen-live-snapshot"


def live_class(model_id: str) -> str:
    """The class every live view of the widget carries (its snapshot hides while one exists)."""
    return f"mediagen-live-{model_id}"


def marked_html(snapshot: str, model_id: str) -> str:
    """``snapshot`` in a wrapper that names its widget, with the rule that hides it (and its
    output area, in JupyterLab, Notebook 7 and classic HTML) while a live view is on the page."""
    live = f":root:has(.{live_class(model_id)})"
    marker = f".mediagen-snapshot-of-{model_id}"  # a class: HTML sanitizers keep it (not data-*)
    rule = (
        f"{live} .jp-OutputArea-child:has(> .jp-OutputArea-output > {marker}),"
        f" {live} .output_area:has(> .output_subarea > {marker}),"
        f" {live} {marker} {{display: none !important}}"
    )
    return (
        f"<style>{rule}</style>"
        f'<div class="{SNAPSHOT_CLASS} mediagen-snapshot-of-{model_id}">{snapshot}</div>'
    )


def _tree(widget: Any, seen: set[int] | None = None) -> Iterator[ipywidgets.Widget]:
    """``widget`` and every widget inside it (a composed widget's ``shown_widgets()``, a box's
    children), recursively."""
    seen = set() if seen is None else seen
    if id(widget) in seen or not isinstance(widget, ipywidgets.Widget):
        return
    seen.add(id(widget))
    yield widget
    shown = getattr(widget, "shown_widgets", None)
    inside = shown() if callable(shown) else None
    for child in inside if inside is not None else getattr(widget, "children", ()) or ():
        yield from _tree(child, seen)


class Snapshotted(Protocol):
    """What a snapshot reads from its widget (``_snapshot.StaticFallback`` gives it all)."""

    model_id: str

    def snapshot_text(self) -> str: ...

    def snapshot_html(self) -> str: ...


class LiveSnapshot:
    """The snapshot output of one widget: shown with the widget, updated as it changes."""

    def __init__(self, widget: Snapshotted, delay: float = UPDATE_DELAY_S) -> None:
        self.widget: Any = widget  # a StaticFallback that is also an ipywidgets DOMWidget
        self.delay = delay
        self.display_id = f"mediagen-snapshot-{widget.model_id}"
        self._loop = _tasks.current_loop()
        self._lock = threading.Lock()
        self._armed = False
        self._stopped = False
        self._timer: asyncio.TimerHandle | None = None
        self._watched: dict[int, traitlets.HasTraits] = {}
        self._sent: dict[str, str] | None = None

    def bundle(self) -> dict[str, str]:
        """The snapshot output's data as the widget is now."""
        return {
            "text/plain": self.widget.snapshot_text(),
            "text/html": marked_html(self.widget.snapshot_html(), self.widget.model_id),
        }

    def show(self, widget_view: dict[str, Any], metadata: dict[str, Any]) -> None:
        """Display the widget view, then the snapshot under its display id; follow changes."""
        from IPython.display import display

        self.widget.add_class(live_class(self.widget.model_id))
        self._watch_tree()
        display(
            {WIDGET_VIEW: widget_view, "text/plain": ""},
            raw=True,
            metadata=metadata,
        )
        self._sent = self.bundle()
        display(self._sent, raw=True, display_id=self.display_id)

    def stop(self) -> None:
        """Stop following the widget (it was closed)."""
        with self._lock:
            self._stopped = True
        for watched in self._watched.values():
            watched.unobserve(self._changed, names=traitlets.All)
        self._watched.clear()
        if self._timer is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed already
                self._loop.call_soon_threadsafe(self._timer.cancel)

    def _watch_tree(self) -> None:
        for widget in _tree(self.widget):
            if id(widget) not in self._watched:
                widget.observe(self._changed, names=traitlets.All)
                self._watched[id(widget)] = widget

    def _changed(self, _change: Any) -> None:
        """Any trait of the widget or of a widget inside it changed (from any thread)."""
        with self._lock:
            if self._armed or self._stopped:
                return
            self._armed = True
        try:
            self._loop.call_soon_threadsafe(self._arm)
        except RuntimeError:  # the loop is closed: the kernel is going away
            self._armed = False

    def _arm(self) -> None:
        # an empty context: the update goes out under the kernel's current request
        self._timer = self._loop.call_later(self.delay, self._flush, context=contextvars.Context())

    def _flush(self) -> None:
        from IPython.display import update_display

        with self._lock:
            self._armed = False
            if self._stopped:
                return
        try:
            self._watch_tree()  # a card added since shows in the snapshot; follow it too
            data = self.bundle()
        except Exception:  # a snapshot never breaks the widget: the last one stays
            log.warning("Drawing the snapshot of %s failed", type(self.widget).__name__,
                        exc_info=True)  # fmt: skip
            return
        if data == self._sent:
            return
        self._sent = data
        update_display(data, raw=True, display_id=self.display_id)

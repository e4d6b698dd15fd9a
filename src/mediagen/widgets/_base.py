"""Base pieces every mediagen widget is built from (reusable by other widgets in the package).

- :class:`MediagenWidget`: an ``anywidget.AnyWidget`` whose front end is a module in
  ``static/`` (``_module = "player.js"``, bundled from ``labextension/widgets/src/views/``),
  styled by the shared ``mediagen.css`` that every module puts in the page once, and by its
  own ``_stylesheets`` if it has any.
- :class:`ReportsErrors`: an ``error`` trait and :meth:`ReportsErrors.report` so a failing
  callback or background task shows its message in the widget instead of vanishing in a log.

CSS conventions (``static/mediagen.css``): a widget's root element has class ``mg-root``;
``mg-card``, ``mg-row``, ``mg-muted``, ``mg-error``, ``mg-badge`` (+ ``mg-badge--ok|warn|bad``),
``mg-button`` (+ ``mg-button--primary``) and ``mg-grid`` are shared; colours come from
JupyterLab's CSS variables with fallbacks, so light and dark themes both work.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any, ClassVar

import anywidget
import traitlets

from mediagen.display._progress import in_marimo
from mediagen.widgets import _assets

log = logging.getLogger("mediagen.widgets")


class ReportsErrors(traitlets.HasTraits):
    """An ``error`` trait the view shows as a banner; never swallow a callback's exception."""

    error = traitlets.Unicode("").tag(sync=True)

    def report(self, exc: BaseException, *, context: str = "") -> None:
        """Show ``exc`` in the widget (and log it, with the traceback, for the record)."""
        message = _describe(exc)
        self.error = f"{context}: {message}" if context else message
        log.warning("%s%s", f"{context}: " if context else "", message, exc_info=exc)

    def clear_error(self) -> None:
        """Hide the error the widget shows."""
        self.error = ""

    @contextlib.contextmanager
    def reporting(self, context: str = "") -> Iterator[None]:
        """``with self.reporting("estimate"): ...``: any exception inside ends up in ``error``."""
        try:
            yield
        except Exception as exc:
            self.report(exc, context=context)


def _describe(exc: BaseException) -> str:
    """A one-line message: the API error's own message and code when it has them, and a 402's
    credit figures ("needs 12.5 credits, 3 available")."""
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    text = f"{message} ({code})" if code and code not in message else message
    shortfall = getattr(exc, "shortfall", None)
    return f"{text}: {shortfall}" if isinstance(shortfall, str) else text


class MediagenWidget(ReportsErrors, anywidget.AnyWidget):
    """An anywidget whose JS is ``static/<_module>``, styled by the shared sheet."""

    _module: ClassVar[str] = ""
    _stylesheets: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "_module" in cls.__dict__ and cls._module:
            cls._esm = _assets.esm(cls._module)
            if cls._stylesheets:
                cls._css = _assets.css(*cls._stylesheets)
        super().__init_subclass__(**kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if in_marimo():
            # marimo serves a widget's module from a file it registers with the cell being
            # run, and cannot when none is (a job card made when a job is submitted, the
            # meter made after the studio's first paint): the module goes as a data URL,
            # which marimo takes as it is (read by anywidget before the traits exist)
            self._esm = _assets.esm_data_url(type(self)._module)
        super().__init__(*args, **kwargs)


class EchoedToPage(traitlets.HasTraits):
    """Trait class for widgets whose page tells the kernel when a value a notebook cell may
    read reached it (``echo`` in the views' shared.ts): marimo re-runs the cells reading a
    widget only on changes a page makes, so a value the kernel set (a winner, the last finished
    job) reaches them through this one."""

    page_seen = traitlets.Unicode("").tag(sync=True)


def widget_ref(widget: anywidget.AnyWidget) -> str:
    """How a composed widget names a part for its view (anywidget's ``host.getWidget``)."""
    return f"anywidget:{widget.model_id}"

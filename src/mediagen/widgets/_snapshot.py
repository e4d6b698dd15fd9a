"""A static picture of a widget for where no widget can run.

A widget's output in a notebook is only a model id: after a kernel restart JupyterLab says
"model not found", and nbconvert, GitHub or a notebook viewer have no kernel at all.
:class:`StaticFallback` gives every mediagen widget a ``text/html`` snapshot of what it shows
(thumbnails, costs, ids: inline styles only, a saved notebook has no stylesheet) and a one-line
``text/plain`` instead of ``<... object at 0x7f...>``.

Displayed in IPython, the snapshot is an output of its own beside the widget view, kept in step
with the widget and hidden while the view is alive (see ``_live_snapshot``): a saved notebook
shows the state at save time, and the live view is never rendered again for it. Callers that
take one bundle (``_repr_mimebundle_``) get the widget view with the snapshot as it is now.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mediagen.display import _html
from mediagen.display._html import plural
from mediagen.widgets._live_snapshot import LiveSnapshot
from mediagen.wire._fields import read_field

#: Keep a saved notebook small: the snapshot shows at most this many generations, each as a
#: small thumbnail (video and audio are named, not embedded).
SNAPSHOT_LIMIT = 12
SNAPSHOT_THUMBNAIL_PX = 160


#: Request fields that set a generation's price, in the order a card shows them.
PRICE_SETTINGS = (
    "quality",
    "size",
    "image_size",
    "resolution",
    "tier",
    "variant",
    "aspect_ratio",
    "duration_seconds",
    "generate_image_count",
    "sample_count",
)


def price_settings(request: Mapping[str, Any] | None) -> dict[str, Any]:
    """The priced settings of a request body (empty when the request is unknown)."""
    request = request or {}
    found = {k: request[k] for k in PRICE_SETTINGS if request.get(k) not in (None, "")}
    for count in ("generate_image_count", "sample_count"):  # one of each is the default
        if found.get(count) == 1:
            del found[count]
    return found


class StaticFallback:
    """Mixin for widgets: a snapshot (``text/plain`` and ``text/html``) beside the widget view."""

    model_id: str
    _live_snapshot: LiveSnapshot | None = None

    def snapshot_text(self) -> str:
        """One line saying what the widget holds, for front ends that show text only."""
        return type(self).__name__

    def snapshot_html(self) -> str:
        """The static HTML of what the widget holds: what a saved notebook, nbconvert or GitHub
        shows where no widget view runs."""
        return f"<div>{_html.escape(self.snapshot_text())}</div>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        if not data:
            return bundle
        data = {**data, "text/plain": self.snapshot_text(), "text/html": self.snapshot_html()}
        return data, metadata

    def _ipython_display_(self) -> None:
        """Two outputs: the widget view, and the snapshot that follows the widget's state."""
        from IPython import get_ipython
        from IPython.display import display

        bundle = super()._repr_mimebundle_()  # type: ignore[misc]
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        view = (data or {}).get("application/vnd.jupyter.widget-view+json")
        if view is None or getattr(self, "comm", None) is None:  # closed: no view to follow
            display({"text/plain": self.snapshot_text(), "text/html": self.snapshot_html()},
                    raw=True)  # fmt: skip
            return
        if getattr(get_ipython(), "kernel", None) is None:  # a terminal prints every update
            display(*self._repr_mimebundle_(), raw=True)
            return
        if self._live_snapshot is None:
            self._live_snapshot = LiveSnapshot(self)
        self._live_snapshot.show(view, metadata or {})

    def close(self) -> None:
        """Close the widget and stop keeping its snapshot output in step."""
        if self._live_snapshot is not None:
            self._live_snapshot.stop()
            self._live_snapshot = None
        super().close()  # type: ignore[misc]


def generations_html(
    title: str, generations: list[Any], settings: dict[str, dict[str, Any]] | None = None
) -> str:
    """Compact cards for ``generations`` (newest first), at most :data:`SNAPSHOT_LIMIT`."""
    settings = settings or {}
    shown = generations[:SNAPSHOT_LIMIT]
    cards = "".join(
        _html.compact_generation_html(
            g, settings.get(read_field(g, "id") or ""), thumbnail_px=SNAPSHOT_THUMBNAIL_PX
        )
        for g in shown
    )
    more = len(generations) - len(shown)
    tail = f"<div style='{_html.MUTED}'>and {plural(more, 'more generation')}</div>" if more else ""
    grid = (
        '<div style="display:grid; gap:8px;'
        f' grid-template-columns: repeat(auto-fill, minmax(170px, 1fr))">{cards}</div>'
    )
    return _html.box(title, (grid if cards else "") + tail, kind="snapshot")

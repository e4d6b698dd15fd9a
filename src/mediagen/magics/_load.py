"""Loading and unloading the extension: magics, display formatters, the client's progress.

Loading twice into one shell is a no-op; unloading puts back exactly what was there before
(a formatter another package registered for a client model, the previous progress reporter).
"""

from __future__ import annotations

from typing import Any

from mediagen.client import _progress_hook
from mediagen.display._progress import Progress
from mediagen.magics import _service as mc
from mediagen.magics._formatters import FALLBACK_RENDERERS
from mediagen.magics._magics import MediagenMagics

_LOADED: dict[int, dict[str, Any]] = {}


def client_model_types() -> list[tuple[type, Any]]:
    """Client model classes without their own ``_repr_html_``, with a fallback renderer."""
    from mediagen import client

    found = []
    for class_name, renderer in FALLBACK_RENDERERS.items():
        cls = getattr(client, class_name, None)
        if isinstance(cls, type) and not hasattr(cls, "_repr_html_"):
            found.append((cls, renderer))
    return found


def _reporter(description: str, unit: str, total: int | None, about: Any = None) -> Progress:
    expected = None
    if about is not None:  # a wait: (client, generation)
        client, generation = about
        expected = _expected(client, generation)
    return Progress(description, total, unit=unit, expected=expected)


def _expected(client: Any, generation: Any) -> float | None:
    """How long the generation's model usually takes for this user: from the client's history
    store, else its journal (``mc.expected_seconds``); None when nothing says. A wait given
    only an id finds the model in the journal. Never an error: it only scales a progress bar."""
    try:
        if isinstance(generation, str):
            journal = getattr(client, "journal", None)
            known = journal.latest().get(generation, {}) if journal is not None else {}
            generation = {"model": known.get("model"), "mode": known.get("mode")}
        return mc.expected_seconds(client, generation)
    except Exception:  # a broken store or journal must not break the wait it decorates
        return None


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and display formatters (idempotent: a second load is a no-op)."""
    if id(ipython) in _LOADED:
        return
    magics = MediagenMagics(shell=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    html_formatter = ipython.display_formatter.formatters["text/html"]
    registered = []
    for cls, renderer in client_model_types():
        previous = html_formatter.for_type(cls, renderer)
        registered.append((cls, previous))
    # the client's long operations (waits, history fetches, batches) now show progress
    previous_reporter = _progress_hook.install(_reporter)
    _LOADED[id(ipython)] = {
        "magics": magics,
        "formatters": registered,
        "reporter": previous_reporter,
    }


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what ``load_ipython_extension`` added."""
    state = _LOADED.pop(id(ipython), None)
    if state is None:
        return
    _progress_hook.install(state["reporter"])
    magics = state["magics"]
    for kind in ("line", "cell"):
        table = ipython.magics_manager.magics[kind]
        if getattr(table.get("mediagen"), "__self__", None) is magics:
            del table["mediagen"]
    registry = ipython.magics_manager.registry
    for key, value in list(registry.items()):
        if value is magics:
            del registry[key]
    if magics in ipython.configurables:
        ipython.configurables.remove(magics)
    html_formatter = ipython.display_formatter.formatters["text/html"]
    for cls, previous in state["formatters"]:
        html_formatter.pop(cls, None)
        if previous is not None:
            html_formatter.for_type(cls, previous)

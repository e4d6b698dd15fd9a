"""Loading and unloading the extension: the magics and the client's progress.

Loading twice into one shell is a no-op; unloading puts back exactly what was there before
(the previous progress reporter).
"""

from __future__ import annotations

from typing import Any

from mediagen.client import AsyncClient, Client, Generation, _hooks
from mediagen.display._progress import Progress
from mediagen.magics._magics import MediagenMagics

_LOADED: dict[int, dict[str, Any]] = {}


def _reporter(description: str, unit: str, total: int | None, about: Any = None) -> Progress:
    expected = None
    if about is not None:  # a wait: (client, generation)
        client, generation = about
        expected = _expected(client, generation)
    return Progress(description, total, unit=unit, expected=expected)


def _expected(client: Client | AsyncClient, generation: Generation | str) -> float | None:
    """How long the generation's model usually takes for this user: from the client's history
    store, else its journal (``history.expected_seconds``); None when nothing says. A wait given
    only an id finds the model in the journal. Never an error: it only scales a progress bar."""
    from mediagen import history

    try:
        if isinstance(generation, str):
            journal = client.journal
            known = journal.latest().get(generation, {}) if journal is not None else {}
            model, mode = known.get("model"), known.get("mode")
        else:
            model, mode = generation.model, generation.mode
        return history.expected_seconds(client, model, mode)
    except Exception:  # a broken store or journal must not break the wait it decorates
        return None


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and the progress display (idempotent: a second load is a no-op)."""
    if id(ipython) in _LOADED:
        return
    magics = MediagenMagics(shell=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    # the client's long operations (waits, history fetches, batches) now show progress
    previous_reporter = _hooks.install_progress(_reporter)
    _LOADED[id(ipython)] = {
        "magics": magics,
        "reporter": previous_reporter,
    }


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what ``load_ipython_extension`` added."""
    state = _LOADED.pop(id(ipython), None)
    if state is None:
        return
    _hooks.install_progress(state["reporter"])
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

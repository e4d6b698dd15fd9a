"""Where the floors above plug into the client, which never imports them.

Three hooks, each set by the layer that owns what it adds:

- **estimate notes** (``mediagen.history``): a line under a batch's printed estimate, such as a
  forecast. The client prints a batch's exact price before sending anything; how long the
  batch will take is the history's to say, from the user's past generations.
- **the history table** (``mediagen.history``): what ``client.generations.to_dataframe()``
  builds. Tables need pandas and the local history store, so the client names the provider
  package and loads it on first use (``require`` names the extra when it is missing).
- **progress** (``%load_ext mediagen``): the display of the client's long operations, a bar
  in a notebook, nothing in a script.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from mediagen._extras import TABLES, require

log = logging.getLogger("mediagen")

# --- estimate notes ------------------------------------------------------------------------

#: ``note(client, items) -> text or None``; ``items`` are the batch's quoted ``BatchItem``s.
Note = Callable[[Any, list[Any]], "str | None"]

_notes: list[Note] = []


def add_estimate_note(note: Note) -> None:
    if note not in _notes:
        _notes.append(note)


def estimate_notes(client: object, items: list[Any]) -> list[str]:
    out = []
    for note in list(_notes):
        try:
            text = note(client, items)
        except Exception as exc:  # a note is an extra: the batch goes on without it
            log.debug("mediagen: estimate note %r failed: %s", note, exc)
            continue
        if text:
            out.append(text)
    return out


# --- the history table ---------------------------------------------------------------------

#: ``builder(client, *, store, sync, rebuild, on_page, **filters) -> pandas.DataFrame``;
#: ``on_page(page)`` is called as each page arrives, ``len(page)`` its generations
Builder = Callable[..., Any]

#: the package that registers the builder when loaded
PROVIDER = "mediagen.history"

_history_builder: Builder | None = None


def set_history_builder(builder: Builder) -> None:
    global _history_builder
    _history_builder = builder


def history_builder() -> Builder:
    if _history_builder is None:
        require("notebook", "client.generations.to_dataframe()", TABLES)
        importlib.import_module(PROVIDER)
    if _history_builder is None:  # pragma: no cover - the provider always registers
        raise RuntimeError(f"{PROVIDER} did not register a history table builder")
    return _history_builder


# --- progress ------------------------------------------------------------------------------

Reporter = Callable[..., AbstractContextManager[Any]]

_reporter: Reporter | None = None


def install_progress(reporter: Reporter | None) -> Reporter | None:
    """Set the process-wide reporter (None removes it); returns the previous one."""
    global _reporter
    previous, _reporter = _reporter, reporter
    return previous


def progress(
    description: str, unit: str = "", total: int | None = None, *, about: Any = None
) -> AbstractContextManager[Any]:
    """A progress display for one operation, or a context yielding None when there is none."""
    if _reporter is None:
        return contextlib.nullcontext(None)
    return _reporter(description, unit, total, about=about)


def generation_status(generation: Any) -> str:
    parts = [str(getattr(generation, "status", "")), str(getattr(generation, "model", ""))]
    charged = getattr(generation, "credits_charged", None)
    if charged is not None:
        parts.append(f"{charged:g} credits charged")
    return " · ".join(p for p in parts if p)

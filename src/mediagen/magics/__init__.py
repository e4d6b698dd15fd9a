"""``%load_ext mediagen``: generate from a notebook cell, see prices first, survive interrupts.

Loading the extension (``%load_ext mediagen``, or ``c.InteractiveShellApp.extensions =
["mediagen"]`` in an IPython profile) registers:

- the cell magic ``%%mediagen image|video|audio [--model M] [--FIELD VALUE ...] [-o NAME]
  [--yes] [--no-wait]``: the cell body is the prompt (the text, for speech). It shows the
  estimate, asks before spending more than ``confirm_above`` credits (unless ``--yes``), submits,
  shows the job live, and binds the finished generation to ``NAME``;
- the line magic ``%mediagen models [KIND] | credits | history [--since 7d] | studio |
  pending | attach ID [-o NAME] | help``;
- progress for the client's long operations (waits, history fetches, batch submits).

The client's models render themselves (``_repr_html_``), so nothing is registered for them.

Unloading removes all of it. Bad arguments give a usage message naming the allowed values
(IPython's ``UsageError``: no traceback), and nothing is sent.

A kernel interrupt while a cell waits stops the *waiting*, not the generation: the job keeps
running on the service, is never resubmitted, stays bound to ``NAME`` (pending), and
``%mediagen attach ID`` picks it up again. Configure the confirmation threshold with
``mediagen.magics.confirm_above = 100`` or ``%config MediagenMagics.confirm_above = 100``.

Inside: ``_cell_line`` splits the cell's line, ``_values`` types one field by its schema,
``_request`` builds and checks the request against the catalog entry, ``_generate`` runs a cell
(quote, consent, submit, wait), ``_commands`` holds the line commands (each calls the typed
client itself), ``_display`` what is shown, ``_load`` (un)loading,
``_settings`` the settings above, ``_session`` what a command or a cell needs from the magics.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from mediagen.client import Client
from mediagen.magics import _settings
from mediagen.magics._commands import LINE_USAGE, parse_since
from mediagen.magics._display import credits_text
from mediagen.magics._load import load_ipython_extension, unload_ipython_extension
from mediagen.magics._magics import MediagenMagics
from mediagen.magics._settings import use_client

# The settings live in ``_settings`` (below the modules that read them, at call time); these
# annotations name them for type checkers, and the module class below reads and writes them there.
#: Ask before a cell spends more than this many credits (after discount). ``--yes`` skips it.
confirm_above: float
#: Longest a cell waits in the foreground, in seconds (the job itself is never cancelled).
wait_timeout: float
#: Seconds between polls while a cell waits (None: the client's own 2 s -> 5 s backoff).
wait_poll_interval: float | None
_client: Client | None


def _forwarded(name: str) -> property:
    """A setting of ``_settings`` as a data descriptor of the package's class, so reading,
    setting and ``monkeypatch``-style save-and-restore see one value, as on a plain module."""

    def get(module: types.ModuleType) -> Any:
        return getattr(_settings, name)

    def set_(module: types.ModuleType, value: Any) -> None:
        setattr(_settings, name, value)

    return property(get, set_, doc=f"``mediagen.magics._settings.{name}``")


class _SettingsModule(types.ModuleType):
    """This package, with its settings kept in ``_settings``: ``mediagen.magics.confirm_above =
    100`` (or the same through ``mediagen.extension``) is the value the magics read."""

    def __dir__(self) -> list[str]:
        """The settings too, so completion in a notebook offers them."""
        return sorted(set(super().__dir__()) | _settings.NAMES)


for _name in _settings.NAMES:
    setattr(_SettingsModule, _name, _forwarded(_name))
del _name

sys.modules[__name__].__class__ = _SettingsModule

__all__ = [
    "LINE_USAGE",
    "MediagenMagics",
    "confirm_above",
    "credits_text",
    "load_ipython_extension",
    "parse_since",
    "unload_ipython_extension",
    "use_client",
    "wait_poll_interval",
    "wait_timeout",
]

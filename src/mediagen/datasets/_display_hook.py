"""Where the widgets plug in a plan's live view.

In a notebook a plan shows as a small widget (``mediagen.widgets.plan``); everywhere else (plain
IPython, a script, a notebook rendered without its kernel) as its static HTML, the same HTML
the widget's snapshot output carries. The widgets are a floor above this package, which never
imports them: their plan module registers its view maker here when it is loaded, and the first
plan displayed in a kernel loads it by name, and only when ipywidgets is installed, so
``import mediagen.datasets`` never pays for ipywidgets.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

#: ``maker(plan) -> widget``: a widget with ``_repr_mimebundle_`` and ``_ipython_display_``
Maker = Callable[[Any], Any]

#: the module that registers the maker when loaded
PROVIDER = "mediagen.widgets.plan"

_maker: Maker | None = None


def register(maker: Maker) -> None:
    global _maker
    _maker = maker


def front_end() -> bool:
    """A kernel a front end talks to (Jupyter's, or a marimo notebook's, so widgets can
    render), and the widget libraries."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if getattr(shell, "kernel", None) is None and not _in_marimo():
        return False
    return all(importlib.util.find_spec(name) is not None for name in ("ipywidgets", "anywidget"))


def _in_marimo() -> bool:
    marimo = sys.modules.get("marimo")
    try:
        return marimo is not None and bool(marimo.running_in_notebook())
    except Exception:  # an older marimo, or one half imported: no widgets there
        return False


def view(plan: Any) -> Any | None:
    """A widget showing ``plan``, or None where no widget can show (use the static HTML)."""
    if not front_end():
        return None
    if _maker is None:
        importlib.import_module(PROVIDER)
    if _maker is None:  # pragma: no cover - the provider always registers
        raise RuntimeError(f"{PROVIDER} did not register a plan view")
    return _maker(plan)

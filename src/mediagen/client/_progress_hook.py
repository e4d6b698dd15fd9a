"""Where a front end plugs in progress displays for the client's long operations.

The client never imports a UI. ``%load_ext mediagen`` installs a reporter (a progress bar in a
notebook, text elsewhere, see ``mediagen.display._progress``); from then on a foreground wait, a
history fetch over many pages and a batch submit say what they are doing. Without a reporter, or
when the caller passed a callback of their own, nothing extra is shown.

A reporter is ``reporter(description, unit, total, about=None)`` returning a context manager that
yields an object with ``update(message=...)`` and ``advance(message=...)``. ``about`` says what
the operation is about when the reporter can say more from it: ``(client, generation)`` for a
wait (the reporter knows how long that model usually takes for this user).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

Reporter = Callable[..., AbstractContextManager[Any]]

_reporter: Reporter | None = None


def install(reporter: Reporter | None) -> Reporter | None:
    """Set the process-wide reporter (None removes it); returns the previous one."""
    global _reporter
    previous, _reporter = _reporter, reporter
    return previous


def task(
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

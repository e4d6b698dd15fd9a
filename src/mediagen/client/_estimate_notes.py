"""Where higher layers add a line to a batch's printed estimate, such as a forecast.

The client prints a batch's exact price before sending anything. How long the batch will take
and how many items will fail come from the user's history (``mediagen.history.forecast``), which
needs pandas: a layer the client never imports. So the history package registers a note here
when it is loaded, and the client prints whatever the notes say. A note that fails is logged and
skipped: it must never stop a batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("mediagen")

#: ``note(client, items) -> text or None``; ``items`` are the batch's quoted ``BatchItem``s.
Note = Callable[[Any, list[Any]], "str | None"]

_notes: list[Note] = []


def register(note: Note) -> None:
    if note not in _notes:
        _notes.append(note)


def lines(client: Any, items: list[Any]) -> list[str]:
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

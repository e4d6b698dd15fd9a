"""The magics' module-wide settings, below every module that reads them.

Users set them on the package (``mediagen.magics.confirm_above = 100``, or through its earlier
name ``mediagen.extension``); the package forwards those writes here, so ``_magics`` and
``_generate`` read the current value without importing the package that imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mediagen.client import Client

#: Ask before a cell spends more than this many credits (after discount). ``--yes`` skips it.
confirm_above: float = 50.0
#: Longest a cell waits in the foreground, in seconds (the job itself is never cancelled).
wait_timeout: float = 3600.0
#: Seconds between polls while a cell waits (None: the client's own 2 s -> 5 s backoff).
wait_poll_interval: float | None = None

_client: Client | None = None

#: The names the package ``mediagen.magics`` reads and writes here.
NAMES = frozenset({"confirm_above", "wait_timeout", "wait_poll_interval", "_client"})


def use_client(client: Client | None) -> None:
    """Make the magics use ``client`` (default: ``mediagen.Client()`` from the environment)."""
    global _client
    _client = client

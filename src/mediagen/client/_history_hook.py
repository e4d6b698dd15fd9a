"""Where the history package plugs in ``client.generations.to_dataframe()``.

Tables of past generations need pandas and the local history store (``mediagen.history``): a
layer above the client, which the client's code never imports. The history package registers
its table builder here when it is loaded; the first ``to_dataframe()`` of a process that has
not loaded it yet loads it by name (as the package loads its own parts), so a plain script
pays for pandas only when it asks for a table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from mediagen._extras import TABLES, require

#: ``builder(client, *, store, sync, rebuild, on_page, **filters) -> pandas.DataFrame``;
#: ``on_page(page)`` is called as each page arrives, ``len(page)`` its generations
Builder = Callable[..., Any]

#: the package that registers the builder when loaded
PROVIDER = "mediagen.history"

_builder: Builder | None = None


def register(builder: Builder) -> None:
    global _builder
    _builder = builder


def builder() -> Builder:
    if _builder is None:
        require("notebook", "client.generations.to_dataframe()", TABLES)
        importlib.import_module(PROVIDER)
    if _builder is None:  # pragma: no cover - the provider always registers
        raise RuntimeError(f"{PROVIDER} did not register a history table builder")
    return _builder

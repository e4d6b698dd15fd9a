"""Names a package loads on first use (PEP 562), from one table of where each lives.

Every package of mediagen keeps its import cheap the same way: the public names are imported
for type checkers under ``TYPE_CHECKING`` and, at run time, loaded from their home module the
first time they are read. This is that loader, written once.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str,
    homes: Mapping[str, str],
    *,
    before: Callable[[str], None] | None = None,
    missing: Callable[[str], Any] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` (pass ``__name__``).

    ``homes`` maps each public name to the module that defines it (absolute, or relative to
    ``package`` with a leading dot). A name is loaded on first read and then kept on the
    package, so later reads are plain lookups. ``before(name)`` runs before a load (to say
    which extra a feature needs); ``missing(name)`` answers for a name not in ``homes``
    (deprecated spellings), raising ``AttributeError`` itself when it has none.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            if missing is not None and not name.startswith("_"):
                return missing(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if before is not None:
            before(name)
        value = getattr(importlib.import_module(home, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        """The public names, loaded or not, beside what the package holds already."""
        return sorted(set(homes) | set(vars(sys.modules[package])))

    return __getattr__, __dir__

"""Front-end code shipped as real files in ``widgets/static``, joined for anywidget.

Each view is a real ES module (``player.js``, ``gallery.js``...) that imports its helpers
from ``./shared.js``. anywidget loads a widget's ``_esm`` from a Blob URL, where relative
imports cannot resolve, so :func:`esm` inlines the relative imports once, at class
definition: a bundler's one job, done in a few lines and without a build step. Every widget
also gets the one shared stylesheet (``mediagen.css``) so they all look alike; other
widgets in the package (and the spend dashboard) can reuse its ``mg-*`` classes.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

STATIC = Path(__file__).with_name("static")
SHARED_CSS = STATIC / "mediagen.css"

_RELATIVE_IMPORT = re.compile(
    r"""^import\s+\{[^}]*\}\s+from\s+["']\./(?P<name>[\w.-]+\.js)["'];?\s*$""", re.MULTILINE
)


@functools.cache
def esm(name: str) -> str:
    """The module ``static/<name>`` with its ``./x.js`` imports inlined (each file once)."""
    return _inline(name, seen=set())


def _inline(name: str, seen: set[str]) -> str:
    seen.add(name)
    source = (STATIC / name).read_text(encoding="utf-8")

    def replace(match: re.Match[str]) -> str:
        dependency = match.group("name")
        if dependency in seen:
            return f"/* {dependency}: already inlined */"
        inlined = _inline(dependency, seen)
        return f"/* --- {dependency} --- */\n{inlined}\n/* --- end {dependency} --- */"

    return _RELATIVE_IMPORT.sub(replace, source)


@functools.cache
def css(*names: str) -> str:
    """The shared stylesheet followed by the widget's own sheets, if any."""
    parts = [SHARED_CSS.read_text(encoding="utf-8")]
    parts += [(STATIC / n).read_text(encoding="utf-8") for n in names]
    return "\n".join(parts)

"""Front-end code shipped as real files in ``widgets/static``, joined for anywidget.

Each view is a real ES module (``player.js``, ``gallery.js``...) that imports its helpers
from ``./shared.js``. anywidget loads a widget's ``_esm`` from a Blob URL, where relative
imports cannot resolve, so :func:`esm` inlines the relative imports once, at class
definition: a bundler's one job, done in a few lines and without a build step.

The one shared stylesheet (``mediagen.css``) so they all look alike is written into
``shared.js``, which puts it in the page once: as each widget's ``_css`` it would be a copy per
widget class, and anywidget rewrites a class's ``<style>`` (restyling the whole page) every
time one of its widgets is created. Other widgets in the package (and the spend dashboard)
can reuse its ``mg-*`` classes; ``_css`` carries only a widget's own sheets.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
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
    if name == "shared.js":
        source = _with_shared_css(source)

    def replace(match: re.Match[str]) -> str:
        dependency = match.group("name")
        if dependency in seen:
            return f"/* {dependency}: already inlined */"
        inlined = _inline(dependency, seen)
        return f"/* --- {dependency} --- */\n{inlined}\n/* --- end {dependency} --- */"

    return _RELATIVE_IMPORT.sub(replace, source)


def _with_shared_css(source: str) -> str:
    """``shared.js`` with ``mediagen.css`` and its hash in its two empty constants."""
    sheet = SHARED_CSS.read_text(encoding="utf-8")
    digest = hashlib.sha256(sheet.encode()).hexdigest()[:16]
    for constant, value in (("SHARED_CSS", sheet), ("SHARED_CSS_HASH", digest)):
        empty = f'const {constant} = "";'
        if empty not in source:
            raise RuntimeError(f"shared.js has lost its line {empty!r}")
        source = source.replace(empty, f"const {constant} = {json.dumps(value)};", 1)
    return source


@functools.cache
def esm_data_url(name: str) -> str:
    """:func:`esm` as a ``data:`` URL, for a host that loads a module only from a URL."""
    encoded = base64.b64encode(esm(name).encode("utf-8")).decode("ascii")
    return f"data:text/javascript;base64,{encoded}"


@functools.cache
def css(*names: str) -> str:
    """A widget's own sheets (the shared one comes with ``shared.js``)."""
    return "\n".join((STATIC / n).read_text(encoding="utf-8") for n in names)

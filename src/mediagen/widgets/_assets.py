"""The widgets' front-end files in ``widgets/static``, as anywidget takes them.

Each view is an ES module (``player.js``, ``gallery.js``...) bundled from TypeScript
(``labextension/widgets/``) by the package build, one self-contained file per view: anywidget
loads a widget's ``_esm`` from a Blob URL (or, in marimo, a ``data:`` URL), where no relative
import could resolve. The build runs on ``pip install`` and ``python -m build``; the modules are
not in git.

The one shared stylesheet (``mediagen.css``, so they all look alike) is built into every view's
module with its hash, and that module puts it in the page once: as each widget's ``_css`` it
would be a copy per widget class, and anywidget rewrites a class's ``<style>`` (restyling the
whole page) every time one of its widgets is created. Other widgets in the package (and the
spend dashboard) can reuse its ``mg-*`` classes; ``_css`` carries only a widget's own sheets.

Each ``_esm`` imports its view's module once per page (:mod:`mediagen.display._modules`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path

from mediagen.display._modules import imported_once

STATIC = Path(__file__).with_name("static")
SHARED_CSS = STATIC / "mediagen.css"


@functools.cache
def esm(name: str) -> str:
    """The ``_esm`` of a widget whose view is ``static/<name>``: the view's module, imported
    once per page (see above)."""
    return imported_once(name, bundled(name))


@functools.cache
def bundled(name: str) -> str:
    """The bundled module ``static/<name>`` (a view's ES module, helpers and sheet included)."""
    path = STATIC / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path} is not built: it is bundled from labextension/widgets by `pip install -e .`"
            " (or `jlpm build:widgets` in labextension/)"
        ) from None


@functools.cache
def esm_data_url(name: str) -> str:
    """:func:`esm` as a ``data:`` URL, for a host that loads a module only from a URL."""
    encoded = base64.b64encode(esm(name).encode("utf-8")).decode("ascii")
    return f"data:text/javascript;base64,{encoded}"


@functools.cache
def css(*names: str) -> str:
    """A widget's own sheets (the shared one comes with each view's module)."""
    return "\n".join((STATIC / n).read_text(encoding="utf-8") for n in names)


def shared_css_hash() -> str:
    """The digest a view's module carries of the ``mediagen.css`` built into it (the first 16
    hex digits of its SHA-256): the page keeps one copy of the sheet per digest."""
    return hashlib.sha256(SHARED_CSS.read_bytes()).hexdigest()[:16]

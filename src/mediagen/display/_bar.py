"""The progress bar a notebook shows while a long operation runs: an anywidget, so JupyterLab,
Notebook 7, VS Code and Colab all draw it from the same ES module, with no ipywidgets control
for a front end to know.

Its module is built with the widgets' others (``labextension/widgets/src/views/progress.ts``)
into the one folder of built front-end modules, ``mediagen/widgets/static``; it is read from
there as a file, which imports nothing of ``mediagen.widgets``. Imported only when a bar is
shown: a script or a terminal never loads anywidget for it.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from mediagen.display._modules import imported_once

MODULE = Path(__file__).parents[1] / "widgets" / "static" / "progress.js"


def _module() -> str:
    try:
        return MODULE.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{MODULE} is not built: it is bundled from labextension/widgets by `pip install -e .`"
            " (or `jlpm build:widgets` in labextension/)"
        ) from None


class ProgressBar(anywidget.AnyWidget):
    """``max`` 0: the amount of work is unknown, and the bar is indeterminate."""

    _esm = imported_once(MODULE.name, _module())

    description = traitlets.Unicode("").tag(sync=True)
    value = traitlets.Int(0).tag(sync=True)
    max = traitlets.Int(0).tag(sync=True)
    line = traitlets.Unicode("").tag(sync=True)

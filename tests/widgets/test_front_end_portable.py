"""The widgets' JavaScript uses only what anywidget gives every front end (the model, the
element, standard browser APIs), so it runs in JupyterLab, Notebook 7, VS Code and Colab alike.

JupyterLab-only globals (``window.jupyterapp``, Lumino widgets, ``@jupyterlab/*`` modules) or
the classic notebook's AMD loader (``require``/``define``, ``Jupyter.notebook``) would work in
one front end and break silently in the others.
"""

from __future__ import annotations

import re

import pytest

from mediagen.widgets import _assets

FRONT_END_ONLY = {
    "window.jupyterapp": re.compile(r"\bjupyterapp\b"),
    "a @jupyterlab or @jupyter-widgets module": re.compile(r"@jupyter(lab|-widgets)/"),
    "Lumino": re.compile(r"\blumino\b", re.IGNORECASE),
    "AMD require/define": re.compile(r"(?<![\w.])(require|define)\s*\("),
    "the classic notebook's globals": re.compile(r"\b(Jupyter|IPython)\.\w"),
    "a bare module import (no bundler at runtime)": re.compile(
        r"""^\s*import\s[^;]*?from\s+["'](?!\./)""", re.MULTILINE
    ),
}
MODULES = sorted(p.name for p in _assets.STATIC.glob("*.js"))


@pytest.mark.parametrize("name", MODULES)
def test_widget_modules_need_nothing_front_end_specific(name):
    source = _assets.esm(name)
    found = [what for what, pattern in FRONT_END_ONLY.items() if pattern.search(source)]
    assert found == []
    if name != "shared.js":
        assert "export default" in source


def test_the_check_catches_a_lab_only_global():
    leaky = "const app = window.jupyterapp; require(['base/js/namespace'], f);"
    found = [what for what, pattern in FRONT_END_ONLY.items() if pattern.search(leaky)]
    assert "window.jupyterapp" in found
    assert "AMD require/define" in found

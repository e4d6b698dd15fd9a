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
    # Jupyter's Backbone model splits "change:a change:b"; anywidget's API (marimo's model)
    # takes one event: subscribe through shared.js's listen()
    "several events in one model.on/off (Backbone only)": re.compile(
        r"""\bmodel\.(?:on|off)\(\s*["'`][^"'`]*\s"""
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
    leaky = (
        "const app = window.jupyterapp; require(['base/js/namespace'], f);"
        ' model.on("change:a change:b", draw);'
    )
    found = [what for what, pattern in FRONT_END_ONLY.items() if pattern.search(leaky)]
    assert "window.jupyterapp" in found
    assert "AMD require/define" in found
    assert "several events in one model.on/off (Backbone only)" in found
    one = 'model.on("change:a", draw); model.off("msg:custom", onMessage);'
    assert not FRONT_END_ONLY["several events in one model.on/off (Backbone only)"].search(one)


def test_the_shared_stylesheet_comes_once_with_shared_js_not_with_each_widget_class():
    import json

    from mediagen.widgets._base import MediagenWidget

    sheet = _assets.SHARED_CSS.read_text(encoding="utf-8")
    classes = {c for c in _subclasses(MediagenWidget) if c.__dict__.get("_module")}
    assert len(classes) == len(MODULES) - 1  # all but shared.js
    for cls in classes:
        own = getattr(cls, "_css", None) or ""
        assert sheet not in own, f"{cls.__name__} sends mediagen.css as its own _css"
        assert _assets.esm(cls._module).count(json.dumps(sheet)) == 1, cls.__name__


def _subclasses(cls: type) -> set[type]:
    import importlib

    for module in _assets.STATIC.glob("*.js"):  # each view's module defines its widget class
        name = {"compare": "_compare", "spend": "spend_dashboard", "studio": "_studio"}.get(
            module.stem, module.stem
        )
        if name != "shared":
            importlib.import_module(f"mediagen.widgets.{name}")
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found

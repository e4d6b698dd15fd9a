"""The widgets' JavaScript uses only what anywidget gives every front end (the model, the
element, standard browser APIs), so it runs in JupyterLab, Notebook 7, VS Code and Colab alike.

JupyterLab-only globals (``window.jupyterapp``, Lumino widgets, ``@jupyterlab/*`` modules) or
the classic notebook's AMD loader (``require``/``define``, ``Jupyter.notebook``) would work in
one front end and break silently in the others. The check reads the modules anywidget loads:
each view bundled from ``labextension/widgets/src/views/<view>.ts`` by the package build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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
    # takes one event: subscribe through shared.ts's listen()
    "several events in one model.on/off (Backbone only)": re.compile(
        r"""\bmodel\.(?:on|off)\(\s*["'`][^"'`]*\s"""
    ),
}
#: Each view's module, named from the sources the build bundles (one module per view).
VIEWS = Path(__file__).resolve().parents[2] / "labextension" / "widgets" / "src" / "views"
MODULES = sorted(f"{p.stem}.js" for p in VIEWS.glob("*.ts"))
#: A bundled module's default export, as esbuild writes it (or as written by hand).
DEFAULT_EXPORT = re.compile(r"export\s+default\b|export\s*\{[^}]*\bas\s+default\b")


def test_every_view_is_built_and_nothing_else_is_shipped_as_a_module():
    assert "studio.js" in MODULES
    assert sorted(p.name for p in _assets.STATIC.glob("*.js")) == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_widget_modules_need_nothing_front_end_specific(name):
    source = _assets.bundled(name)
    found = [what for what, pattern in FRONT_END_ONLY.items() if pattern.search(source)]
    assert found == []
    assert DEFAULT_EXPORT.search(source)
    assert not re.search(r"""^\s*import\s""", source, re.MULTILINE), "one self-contained file"


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


def test_the_shared_stylesheet_comes_once_with_each_view_module_not_with_its_widget_class():
    from mediagen.display._bar import ProgressBar
    from mediagen.widgets._base import MediagenWidget

    sheet = _assets.SHARED_CSS.read_text(encoding="utf-8")
    digest = json.dumps(_assets.shared_css_hash())
    # a line of the sheet only it holds: the sheet itself is in the module (as a JS string)
    marker = next(line for line in sheet.splitlines() if line.startswith(".mg-root {"))
    classes = {c: c._module for c in _subclasses(MediagenWidget) if c.__dict__.get("_module")}
    # the progress bar lives below the widgets (the client's waits show it), without their base
    assert ProgressBar._esm == _assets.esm("progress.js")
    classes[ProgressBar] = "progress.js"
    assert sorted(classes.values()) == MODULES
    for cls, name in classes.items():
        own = getattr(cls, "_css", None) or ""
        assert sheet not in own, f"{cls.__name__} sends mediagen.css as its own _css"
        module = _assets.bundled(name)
        # the build put in today's sheet (an older one would carry another digest), once
        assert module.count(digest) == 1, f"{name} is not built from this mediagen.css"
        assert module.count(marker) == 1, cls.__name__


def _subclasses(cls: type) -> set[type]:
    import importlib

    for module in MODULES:  # each view's module defines its widget class
        stem = module.removesuffix(".js")
        if stem == "progress":
            continue
        name = {"compare": "_compare", "spend": "spend_dashboard", "studio": "_studio"}.get(
            stem, stem
        )
        importlib.import_module(f"mediagen.widgets.{name}")
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found

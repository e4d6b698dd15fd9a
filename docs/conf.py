"""Sphinx configuration of mediagen's documentation site.

Build it (warnings are errors, every cross-reference checked, nothing fetched online):

    python -m sphinx -j 8 -W --keep-going -n -b html docs docs/_build/html

The how-to guides are executed at build time against a local sandbox started here, the way
``pytest --nbval`` runs the tutorials (the root ``conftest.py``): one sandbox at speed 0 for the
build, a fresh organization and API key for each page, handed to its kernel through the
environment. A cell that raises fails the build. The tutorial notebooks (``notebooks/``) show
the outputs they store: ``pytest --nbval`` runs each against a fresh sandbox and fails when a
cell raises or an output differs from the stored one.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "notebooks_support"))

from mediagen import __version__  # noqa: E402
from notebook_sandbox import NotebookSandbox  # noqa: E402

project = "mediagen"
author = "mediagen developers"
copyright = "2026, mediagen developers"  # noqa: A001
version = release = __version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx_copybutton",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "jupyter_execute"]
suppress_warnings: list[str] = []

# -- the pages ---------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
# A link to a file of the repository outside docs/ (README.md, CONTRIBUTING.md) has no page here.
myst_url_schemes = ["http", "https", "mailto"]

html_theme = "pydata_sphinx_theme"
html_title = f"mediagen {release}"
html_static_path = ["_static"]
html_css_files = ["mediagen-docs.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
html_sidebars = {"index": [], "getting-started": []}

# -- the API reference -------------------------------------------------------------------------
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
add_module_names = False
# Names of other libraries in the signatures: no intersphinx (the build fetches nothing), so
# their references are not links.
nitpick_ignore_regex = [
    ("py:.*", r"(httpx|pandas|pd|numpy|np|pyarrow|pa|duckdb|matplotlib|dask|dd|distributed|"
     r"pyspark|ipywidgets|anywidget|traitlets|IPython|fsspec|asyncio|concurrent|os|pathlib|"
     r"datetime|collections|typing|typing_extensions|types|builtins|_io|io|contextlib)\b.*"),
    ("py:.*", r"(Any|Path|PathLike|Mapping|Sequence|Iterable|Iterator|AsyncIterator|Callable|"
     r"Awaitable|Coroutine|Hashable|Literal|Self|TracebackType|DataFrame|Series|Figure|Axes|"
     r"ClientT|BlockingT|AwaitingT|T|R|ParamSpec|Generic|Protocol|TypeVar|NoneType|StructType|"
     # internal types named bare in a signature (the journal, the catalog's rules, a row hook,
     # a history's page source, a generation or its JSON in the gallery, a widget's callbacks,
     # a client's executor, what a flow reads of its client)
     r"Journal|Catalog|OnRow|MediaItem|Page|PageSource|Shown|Submitted|Finished|Executor|AsyncExecutor|"
     r"ClientCore)"),
    # a generic spelled in a string annotation, cut at its comma by the signature parser
    ("py:.*", r"'?\w+\[.*"),
    ("py:.*", r"t\.\w+"),
    # the package's private modules: base classes, protocols and type variables of the public
    # names, which the reference does not document as pages of their own (named as written,
    # module alias and all, in a signature left unevaluated for naming a type checker's import)
    ("py:.*", r"(mediagen(\.\w+)*\.)?_\w+(\.\w+)*"),
]

# -- notebooks and executable pages ------------------------------------------------------------
nb_execution_mode = "force"
# The tutorials are not run a second time here: the tests run each one against a fresh sandbox
# (``pytest --nbval``, the root conftest.py) and fail when a cell raises or an output differs
# from the one the notebook stores, which is the output this site shows.
nb_execution_excludepatterns = ["tutorials/*.ipynb"]
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_in_temp = True  # the outputs a page saves (renders/, history.csv) go to a temp dir
nb_merge_streams = True
# A widget shows through its static snapshot (the output beside it): the page loads no widget
# manager from a CDN, and the live view's output falls back to its one-line text.
nb_ipywidgets_js: dict[str, Any] = {}
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_number_source_lines = False

TUTORIALS = DOCS / "tutorials"


def _copy_tutorials() -> None:
    """The notebooks users open live in notebooks/; the site renders copies of them."""
    for old in TUTORIALS.glob("*.ipynb"):
        old.unlink()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shutil.copyfile(notebook, TUTORIALS / notebook.name)


_copy_tutorials()

_state: dict[str, Any] = {"sandbox": None}


def _sandbox() -> NotebookSandbox:
    if _state["sandbox"] is None:
        _state["sandbox"] = NotebookSandbox().start()
        atexit.register(_stop_sandbox)
    return _state["sandbox"]


def _stop_sandbox(*_: Any) -> None:
    if _state["sandbox"] is not None:
        _state["sandbox"].stop()
        _state["sandbox"] = None


def _start_sandbox(app: Any) -> None:
    """Started before the pages are read, so with ``-j N`` every reading process shares it."""
    if app.config.nb_execution_mode != "off":
        _sandbox()


def _connect_page(app: Any, docname: str, source: list[str]) -> None:
    """Before a page is read (and executed): its own tenant and cache in the kernel's env.

    Only the sandbox the main process started is used (a reading process forked by ``-j``
    shares it): a process that could not stop what it started never starts one."""
    sandbox = _state["sandbox"]
    if sandbox is None:  # execution is off: nothing runs
        return
    if "{code-cell}" in source[0]:  # a guide (a tutorial is not executed here)
        os.environ.update(sandbox.env_for(Path(docname.replace("/", "-"))))


def _public_name(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """A signature names a class where it is defined (``mediagen.client._models.Generation``)
    or by its bare name; the reference documents it under its public name
    (``mediagen.Generation``): link there when exactly one public object has that name."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if not target.startswith("mediagen.") and "." in target:
        return None
    name = target.rsplit(".", 1)[-1]
    domain = env.get_domain("py")
    public = {
        full
        for full in domain.objects
        if full.rsplit(".", 1)[-1] == name and not any(p.startswith("_") for p in full.split("."))
    }
    if len(public) != 1:
        return None
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], public.pop(), node, contnode
    )


def setup(app: Any) -> dict[str, Any]:
    app.connect("missing-reference", _public_name)
    app.connect("builder-inited", _start_sandbox)
    app.connect("source-read", _connect_page)
    app.connect("build-finished", _stop_sandbox)
    return {"parallel_read_safe": True}

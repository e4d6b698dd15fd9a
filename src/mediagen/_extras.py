"""Which extra each feature needs, and the one-line error that names it.

The bare install is the client (httpx). Widgets, tables, the sandbox and the clusters need
packages that come with an extra (``pip install "mediagen[notebook]"``). Without them, the
feature would end in ``ModuleNotFoundError: No module named 'ipywidgets'`` somewhere deep in
its imports; instead each feature calls :func:`require` first, which raises
:class:`MissingExtraError` whose message is one line naming the command that fixes it. It sits
on the bottom floor because every floor above (the client's history hook, the datasets, the
widgets, the magics, the command line) asks it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable

#: the modules (import names) each extra brings, as pyproject.toml's optional dependencies
NOTEBOOK = ("anywidget", "ipywidgets", "IPython", "pandas", "pyarrow", "duckdb", "matplotlib")
SANDBOX = ("fastapi", "uvicorn", "pydantic", "numpy", "PIL", "av", "espeakng_loader")
EXTRAS: dict[str, tuple[str, ...]] = {
    "notebook": NOTEBOOK,
    "sandbox": SANDBOX,
    "lab": (*NOTEBOOK, *SANDBOX, "jupyterlab", "ipykernel"),
    "dask": ("dask", "distributed", "pandas", "pyarrow"),
    "spark": ("pyspark", "pandas", "pyarrow"),
    "provenance": ("c2pa",),
}
#: what a table needs (``df.mediagen``, ``to_dataframe()``): a part of the notebook extra
TABLES = ("pandas", "pyarrow")


class MissingExtraError(ImportError):
    """A feature was used without the extra that brings its packages.

    Its message is one line: what needs which extra, the module that is missing, and the
    ``pip install`` command that adds it. The original ``ModuleNotFoundError`` is chained
    (``__cause__``). ``extra`` is the extra's name; ``name`` (as on any ImportError) the
    missing module.
    """

    def __init__(self, feature: str, extra: str, missing: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(
            f"{feature} needs the {extra} extra (no module named {missing!r}): "
            f'pip install "mediagen[{extra}]"',
            name=missing,
        )


def _absent(module: str) -> bool:
    """True when ``module`` cannot be imported: not installed, or blocked in ``sys.modules``."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a parent missing, or sys.modules[module] is None
        return True


def require(extra: str, feature: str, modules: Iterable[str] | None = None) -> None:
    """Raise :class:`MissingExtraError` unless ``modules`` (default: all of ``extra``'s) can
    be imported. Only looks them up (``find_spec``): nothing is imported when all are there."""
    for module in EXTRAS[extra] if modules is None else modules:
        if _absent(module):
            try:
                importlib.import_module(module)
            except ImportError as missing:
                raise MissingExtraError(feature, extra, module) from missing
            # found on import after all (a finder that find_spec does not see): go on

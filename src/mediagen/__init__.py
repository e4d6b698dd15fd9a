"""mediagen: a JupyterLab toolkit for a paid media generation service.

Everything a script needs is here, flat: ``mediagen.Client`` / ``mediagen.AsyncClient``, the
models (``Generation``, ``GenerationOutput``, ``Estimate``, ``Credits``, ``ModelInfo``,
``Asset``) and the exceptions (``APIError`` and one subclass per status of the spec). Importing
it loads nothing but the release number: each name is loaded on first use (PEP 562), the client
with httpx and only the modules a ``Client()`` needs; widgets, history (pandas) and the IPython
extension load when used, so ``import mediagen`` stays fast in a plain script.
"""

import sys
from typing import TYPE_CHECKING, Any

from mediagen._version import __version__

if TYPE_CHECKING:  # what editors and type checkers read; loaded on first use (below)
    from pathlib import Path

    from mediagen._extras import MissingExtraError
    from mediagen.client import (
        APIConnectionError,
        APIError,
        APITimeoutError,
        Asset,
        AsyncClient,
        AuthenticationError,
        BadRequestError,
        BatchItem,
        BatchResult,
        Budget,
        BudgetExceededError,
        Client,
        ConflictError,
        Credits,
        DownloadError,
        Estimate,
        Generation,
        GenerationErrorInfo,
        GenerationFailedError,
        GenerationOutput,
        Interrupted,
        LocalValidationError,
        MediagenError,
        MemberLimit,
        MissingAPIKeyError,
        ModelInfo,
        NotFoundError,
        PaymentRequiredError,
        PermissionDeniedError,
        RateLimitError,
        RateStatus,
        ServerError,
        SpendLimit,
        SpendLimitExceededError,
        SubmitInterrupted,
        UnexpectedResponseError,
        UnknownFieldError,
        UploadTicket,
        ValidationError,
        WaitInterrupted,
        WaitTimeoutError,
        budget,
    )

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "Asset",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BatchItem",
    "BatchResult",
    "Budget",
    "BudgetExceededError",
    "Client",
    "ConflictError",
    "Credits",
    "DownloadError",
    "Estimate",
    "Generation",
    "GenerationErrorInfo",
    "GenerationFailedError",
    "GenerationOutput",
    "Interrupted",
    "LocalValidationError",
    "MediagenError",
    "MemberLimit",
    "MissingAPIKeyError",
    "MissingExtraError",
    "ModelInfo",
    "NotFoundError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimitError",
    "RateStatus",
    "ServerError",
    "SpendLimit",
    "SpendLimitExceededError",
    "SubmitInterrupted",
    "UnexpectedResponseError",
    "UnknownFieldError",
    "UploadTicket",
    "ValidationError",
    "WaitInterrupted",
    "WaitTimeoutError",
    "__version__",
    "budget",
    "col",
    "compare",
    "spend_dashboard",
    "studio",
    "verify",
]


def studio(client=None, **options):
    """The whole studio in one cell (imports the widgets on first use)."""
    _require_notebook("mediagen.studio()")
    from mediagen.widgets import studio as _studio

    return _studio(client, **options)


def compare(prompts, settings=None, client=None, *, models=None, **options):
    """A prompt x model grid, priced before anything runs: the columns are ``models=`` (ids,
    or dicts of a model and its fields), also accepted second or as ``settings=``
    (``mediagen.widgets.Compare``: ``run=``, ``budget=``, ``concurrency=``)."""
    _require_notebook("mediagen.compare()")
    from mediagen.widgets import compare as _compare

    return _compare(prompts, settings, client, models=models, **options)


def _load_compare(path, client=None, **options):
    """A grid saved with ``grid.save(path)``, back without pricing or running anything again."""
    _require_notebook("mediagen.compare.load()")
    from mediagen.widgets import Compare

    return Compare.load(path, client, **options)


compare.load = _load_compare  # type: ignore[attr-defined]  # mediagen.compare.load(path)


def spend_dashboard(client=None, **options):
    """What was spent, on what, and what failed: filters, a date range, plots and a sortable,
    searchable table (``mediagen.widgets.spend_dashboard.SpendDashboard``)."""
    _require_notebook("mediagen.spend_dashboard()")
    from mediagen.client import Client
    from mediagen.widgets.spend_dashboard import SpendDashboard

    return SpendDashboard(client if client is not None else Client(), **options)


def load_ipython_extension(ipython):
    """``%load_ext mediagen``: the magics and display formatters (see ``mediagen.magics``)."""
    _require_notebook("%load_ext mediagen")
    from mediagen.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython):
    from mediagen.magics import unload_ipython_extension as _unload

    _unload(ipython)


def _require_notebook(feature: str) -> None:
    """Raise ``MissingExtraError`` (one line naming ``pip install "mediagen[notebook]"``) when
    the notebook extra's packages are not installed."""
    from mediagen._extras import require

    require("notebook", feature)


def col(name: str) -> Any:
    """A request field that takes each row's value of column ``name`` as it is (a list of
    asset ids, a number), for ``df.mediagen.plan(...)`` (``mediagen.datasets.col``)."""
    from mediagen.datasets._col import col as _col

    return _col(name)


def verify(path: "str | Path", *, trust_anchors: "str | Path | None" = None) -> Any:
    """The content credentials of a saved output, checked (``mediagen.provenance.verify``):
    ``.status`` is ``valid``, ``untrusted signer``, ``tampered``, ``unsigned`` or
    ``no manifest``; ``.line()`` says it in one line. ``trust_anchors``: a team's CA (PEM)."""
    from mediagen.provenance import verify as _verify

    return _verify(path, trust_anchors=trust_anchors)


class _PandasWatch:
    """Registers ``df.mediagen`` the moment pandas is imported (pandas' own accessor
    registration, run right after pandas loads), so ``import mediagen`` never loads pandas.

    A finder on ``sys.meta_path`` that answers for ``pandas`` only: it asks the finders after
    it for pandas' spec and wraps that loader's ``exec_module``; it leaves the path once pandas
    is loaded. A lookup that loads nothing (``importlib.util.find_spec("pandas")``, as a check
    for an installed extra makes) leaves it watching for the real import."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "pandas":
            return None
        for finder in sys.meta_path:
            if isinstance(finder, _PandasWatch):
                continue
            spec = getattr(finder, "find_spec", lambda *_: None)(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            _unwatch()
            return spec

        def exec_module(module: Any) -> None:
            _unwatch()
            run(module)
            _register_accessor()

        loader.exec_module = exec_module  # type: ignore[union-attr]
        return spec


def _unwatch() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PandasWatch)]


def _register_accessor() -> None:
    from mediagen.datasets._accessor import register

    register()


if "pandas" in sys.modules:
    _register_accessor()
elif not any(isinstance(f, _PandasWatch) for f in sys.meta_path):
    sys.meta_path.insert(0, _PandasWatch())


#: ``mediagen.dask`` and ``mediagen.spark`` are modules too (``import mediagen.dask``), the
#: same objects as these
_CLUSTERS = {"dask": "mediagen.datasets.dask", "spark": "mediagen.datasets.spark"}


def __getattr__(name: str) -> Any:
    if name in _CLUSTERS:  # mediagen.dask.generate(ddf, ...), mediagen.spark.generate(sdf, ...)
        import importlib

        from mediagen._extras import require

        require(name, f"mediagen.{name}")

        return importlib.import_module(_CLUSTERS[name])
    if name == "datasets":
        import importlib

        return importlib.import_module("mediagen.datasets")
    if name == "MissingExtraError":
        from mediagen._extras import MissingExtraError

        return MissingExtraError
    if name in __all__:  # one of the client's names (the rest are bound above)
        from mediagen import client

        return getattr(client, name)
    if name.startswith("_"):  # a submodule not loaded yet: the import system loads it
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from mediagen.client._errors import DEPRECATED_NAMES, deprecated_name

    if name in DEPRECATED_NAMES:
        return deprecated_name(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, loaded or not, beside what the module holds already."""
    return sorted(set(__all__) | set(vars(sys.modules[__name__])))

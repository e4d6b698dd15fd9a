"""``import mediagen`` is light (no pandas, widgets or IPython) and exposes the flat namespace."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mediagen

HEAVY = ("pandas", "ipywidgets", "IPython", "anywidget", "numpy", "mediagen_sandbox")


def test_import_mediagen_loads_no_notebook_or_data_libraries():
    code = (
        "import json, sys, mediagen\n"
        "c = mediagen.Client(api_key='k', base_url='http://127.0.0.1:9', journal=False)\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


def test_the_public_names_and_their_statuses():
    statuses = {
        mediagen.AuthenticationError: 401,
        mediagen.PaymentRequiredError: 402,
        mediagen.PermissionDeniedError: 403,
        mediagen.NotFoundError: 404,
        mediagen.ConflictError: 409,
        mediagen.ValidationError: 422,
        mediagen.RateLimitError: 429,
    }
    from mediagen.client._errors import STATUS_ERRORS

    for cls, status in statuses.items():
        assert issubclass(cls, mediagen.APIError)
        assert STATUS_ERRORS[status] is cls
    assert issubclass(mediagen.ServerError, mediagen.APIError)
    assert issubclass(mediagen.APITimeoutError, mediagen.APIConnectionError)
    assert issubclass(mediagen.WaitTimeoutError, TimeoutError)
    for name in (
        "Client",
        "AsyncClient",
        "Generation",
        "GenerationOutput",
        "Estimate",
        "Credits",
        "ModelInfo",
        "Asset",
        "GenerationFailedError",
        "budget",
        "Budget",
    ):
        assert name in mediagen.__all__
        assert callable(getattr(mediagen, name))  # a class or a function, not a stray module


def test_the_public_namespace_is_static_for_editors_and_type_checkers():
    """Every public name is bound by an import or a def that a type checker reads (AsyncClient
    under ``TYPE_CHECKING``, loaded lazily at run time), ``__all__`` is a literal list, and no
    name the client exports is forgotten at the top."""
    import ast
    import inspect

    import mediagen.client

    tree = ast.parse(inspect.getsource(mediagen))
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.FunctionDef) and tree.body.count(node):
            bound.add(node.name)
    declared = next(
        n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__"
    )
    assert isinstance(declared, ast.List)
    names = [element.value for element in declared.elts]
    assert set(names) <= bound, set(names) - bound
    assert set(mediagen.client.__all__) <= set(names)
    assert "globals()" not in inspect.getsource(mediagen)


def test_one_name_per_exception_and_the_old_short_names_still_work():
    objects = [getattr(mediagen, name) for name in mediagen.__all__ if name != "AsyncClient"]
    errors = [obj for obj in objects if isinstance(obj, type) and issubclass(obj, Exception)]
    assert len(errors) == len(set(errors))  # no exception exported under two names
    assert all(obj.__name__ in mediagen.__all__ for obj in errors)
    for module in (mediagen, mediagen.client):
        with pytest.warns(DeprecationWarning, match="NotFoundError"):
            assert module.NotFound is mediagen.NotFoundError
        assert "NotFound" not in module.__all__
        with pytest.warns(DeprecationWarning, match="GenerationFailedError"):
            assert module.GenerationFailed is mediagen.GenerationFailedError
        with pytest.warns(DeprecationWarning, match="GenerationErrorInfo"):
            assert module.GenerationError is mediagen.GenerationErrorInfo
        assert not {"GenerationFailed", "GenerationError"} & set(module.__all__)


def test_the_failure_model_and_the_failure_exception_say_which_is_which():
    """The data a failed generation carries is not an exception; the exception says Error."""
    assert not issubclass(mediagen.GenerationErrorInfo, BaseException)
    assert issubclass(mediagen.GenerationFailedError, mediagen.MediagenError)
    gen = mediagen.Generation.from_dict(
        {"id": "g", "status": "failed", "error": {"code": "safety", "message": "blocked"}}
    )
    assert isinstance(gen.error, mediagen.GenerationErrorInfo)
    with pytest.raises(mediagen.GenerationFailedError) as caught:
        gen.raise_for_error()
    assert caught.value.code == "safety"

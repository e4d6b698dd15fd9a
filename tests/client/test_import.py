"""``import mediagen`` is light (no pandas, widgets or IPython) and exposes the flat namespace."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import mediagen

HEAVY = (
    "pandas",
    "ipywidgets",
    "IPython",
    "anywidget",
    "duckdb",
    "pyarrow",
    "numpy",
    "mediagen_sandbox",
)

#: every module ``import mediagen; mediagen.Client()`` loads beyond what ``import httpx;
#: httpx.Client()`` loads: the client's settings, its requests and retry policy (with the
#: wire names they use), its driver (beside its asyncio twin's, which loads no asyncio), the
#: module declaring the two clients and the key's pace (a record the machine's processes
#: share, under a file lock). Batches, uploads, models, the journal and the resources load on
#: the client's first call.
CLIENT_STARTUP = {
    "mediagen",
    "mediagen._version",
    "mediagen._lazy",
    "mediagen.client",
    "mediagen.client._drivers",
    "mediagen.client._base",
    "mediagen.client._clients",
    "mediagen.client._config",
    "mediagen.client._errors",
    "mediagen.client._requests",
    "mediagen.wire",
    "mediagen.wire._names",
    "mediagen.local",
    "mediagen.local._pace",
    "fcntl",
}


def _modules_loaded(code: str, tmp_path) -> list[str]:
    """The module names ``code`` (ending with a ``loaded`` set) reports, in a fresh interpreter
    whose cache directory is ``tmp_path``."""
    env = {**os.environ, "MEDIAGEN_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code + "\nprint(json.dumps(sorted(loaded)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=env,
    )
    return json.loads(out.stdout)


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


def test_import_mediagen_alone_loads_only_its_release_number(tmp_path):
    """The client's names load on first use, so a bare ``import mediagen`` loads not even
    httpx: no third-party module and no mediagen module beyond the release number. Standard
    library modules are left out of the comparison, since which of them the interpreter has
    loaded before the first line runs differs (a virtual environment starts with fewer)."""
    loaded = _modules_loaded(
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import mediagen\n"
        "loaded = {m for m in set(sys.modules) - before\n"
        "          if m.split('.')[0] not in sys.stdlib_module_names}",
        tmp_path,
    )
    assert loaded == ["mediagen", "mediagen._version"]


def test_a_first_client_loads_only_what_constructing_it_needs(tmp_path):
    """Beyond httpx and its client, ``mediagen.Client()`` loads the named startup modules and
    nothing else: an eager import added anywhere on that path (a flow, the models, a library
    httpx does not load) fails here."""
    loaded = _modules_loaded(
        "import json, sys\n"
        "import httpx\n"
        "httpx.Client(base_url='http://127.0.0.1:9')\n"
        "before = set(sys.modules)\n"
        "import mediagen\n"
        "mediagen.Client(api_key='k', base_url='http://127.0.0.1:9')\n"
        "loaded = set(sys.modules) - before",
        tmp_path,
    )
    assert set(loaded) <= CLIENT_STARTUP, sorted(set(loaded) - CLIENT_STARTUP)
    assert "mediagen.client._drivers" in loaded  # the set is what a client needs, not less


def test_a_client_loads_the_rest_on_its_first_call(sandbox, tenant, tmp_path):
    """The deferred modules arrive with the first use of a resource, and the call works."""
    loaded = _modules_loaded(
        "import json, sys, mediagen\n"
        f"c = mediagen.Client(api_key={tenant.api_key!r}, base_url={sandbox.base_url!r})\n"
        "before = set(sys.modules)\n"
        "assert c.models.get('pixel-1').id == 'pixel-1'\n"
        "loaded = set(sys.modules) - before",
        tmp_path,
    )
    assert {"mediagen.client._resources", "mediagen.client._submit"} <= set(loaded)


def test_the_lazy_names_come_from_the_modules_type_checkers_read():
    """``mediagen.client`` resolves each public name at run time from the module its
    ``TYPE_CHECKING`` imports name, so editors and the running code see one object; ``dir()``
    lists every public name before it is loaded."""
    import ast
    import importlib
    import inspect

    import mediagen.client

    tree = ast.parse(inspect.getsource(mediagen.client))
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    static = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert set(static) == set(mediagen.client.__all__)
    for name in mediagen.client.__all__:
        home = importlib.import_module(static[name])
        assert getattr(mediagen.client, name) is getattr(home, name), name
        assert getattr(mediagen, name) is getattr(mediagen.client, name)
    assert set(mediagen.__all__) <= set(dir(mediagen))
    assert set(mediagen.client.__all__) <= set(dir(mediagen.client))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        mediagen.Nope  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        mediagen.client.Nope  # noqa: B018


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

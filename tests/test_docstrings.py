"""Every public name says what it is for: each name of ``mediagen.__all__`` and of the public
packages (widgets, datasets, history, the cluster adapters), and every public method and
property of their classes, has a docstring (inherited counts, as ``help()`` shows it).

The API reference (docs/api) is generated from these; a name without one would be a bare
signature there.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = {
    "mediagen": None,
    "mediagen.widgets": None,
    "mediagen.datasets": None,
    "mediagen.history": None,
    "mediagen.datasets.dask": ["generate"],
    "mediagen.datasets.spark": ["generate"],
}
#: the resources a client hands out (client.images, client.generations, ...)
RESOURCES = [
    f"mediagen.client._resources.{prefix}{name}"
    for prefix in ("", "Async")
    for name in (
        "Images",
        "Videos",
        "Audio",
        "Generations",
        "GenerationList",
        "Models",
        "CreditsResource",
        "Uploads",
    )
]


def _public_objects() -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for module_name, names in MODULES.items():
        module = importlib.import_module(module_name)
        for name in names or module.__all__:
            value = getattr(module, name)
            if name.startswith("__") or inspect.ismodule(value):
                continue
            if not (inspect.isclass(value) or callable(value)):
                continue  # constants (RESULT_COLUMNS) are described where they are used
            found.append((f"{module_name}.{name}", value))
    for path in RESOURCES:
        module_name, name = path.rsplit(".", 1)
        found.append((path, getattr(importlib.import_module(module_name), name)))
    return found


def _undocumented() -> list[str]:
    missing = []
    for qualname, value in _public_objects():
        if not inspect.getdoc(value):
            missing.append(qualname)
        if not inspect.isclass(value):
            continue
        for attr in dir(value):
            if attr.startswith("_"):
                continue
            static = inspect.getattr_static(value, attr)
            if not (
                isinstance(static, property)
                or inspect.isfunction(static)
                or isinstance(static, (classmethod, staticmethod))
            ):
                continue
            defined_here = any(
                attr in vars(k) for k in value.__mro__ if k.__module__.startswith("mediagen")
            )
            if defined_here and not inspect.getdoc(getattr(value, attr, static)):
                missing.append(f"{qualname}.{attr}")
    return missing


def test_every_public_name_and_method_has_a_docstring():
    missing = _undocumented()
    assert not missing, "no docstring: " + ", ".join(missing)


@pytest.mark.parametrize("name", ["Client", "AsyncClient", "MissingExtraError", "budget"])
def test_the_main_names_are_checked(name):
    assert f"mediagen.{name}" in dict(_public_objects())

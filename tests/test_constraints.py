"""``.ci/constraints.txt``, the known-good set a contributor can install, covers what the test
extra asks for: a dependency added to pyproject.toml without refreshing the lock fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib", reason="Python 3.10 has no tomllib to read pyproject")


def _compare_lock():
    spec = importlib.util.spec_from_file_location("compare_lock", ROOT / ".ci" / "compare_lock.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _requirements(extra: str) -> list[Requirement]:
    """Every requirement installing ``mediagen[extra]`` brings in directly, its own extras
    followed through."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    todo, seen = [extra], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for raw in project["optional-dependencies"][name]:
            requirement = Requirement(raw)
            if canonicalize_name(requirement.name) == "mediagen":
                todo += sorted(requirement.extras)
            else:
                found.append(requirement)
    return found


def test_the_lock_pins_every_test_requirement_within_its_range():
    locked = _compare_lock()._pins(ROOT / ".ci" / "constraints.txt", markers=True)
    outside = []
    for requirement in _requirements("test"):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = locked.get(canonicalize_name(requirement.name))
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            outside.append(f"{requirement} (locked: {version})")
    assert not outside, (
        "refresh .ci/constraints.txt with scripts/refresh-constraints: " + ", ".join(outside)
    )


def test_the_comparison_names_each_package_that_moved(tmp_path, capsys):
    """What CI prints under its resolved versions: each package whose version differs from the
    lock, each the lock lacks, each the lock has and the run did not install."""
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "httpx==0.28.1\n    # via mediagen\n"
        f"old-only==1.0 ; python_full_version < '{sys.version_info.major}.0'\n"
        "gone==2.0\nsame==1.0\n"
    )
    freeze = tmp_path / "freeze.txt"
    freeze.write_text("httpx==0.29.0\nsame==1.0\nnew-one==3.0\nold-only==1.0\n")
    _compare_lock().main(str(lock), str(freeze))
    assert capsys.readouterr().out.splitlines() == [
        "httpx: 0.28.1 -> 0.29.0",
        "new-one: not locked -> 3.0",
        "old-only: not locked -> 1.0",
        "gone: 2.0 -> not installed",
    ]

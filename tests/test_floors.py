"""The floors of docs/architecture.md hold for type-only imports too.

import-linter's layers contract (pyproject.toml) reads only the imports made at run time; an
import under ``TYPE_CHECKING`` that points up a floor is still a knot an editor, mypy and the
next reader follow. This test reads the floors from that same contract and checks every import
between two floors against them, type-only ones included, listing each that points up.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grimp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli where the standard library has no TOML reader
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _floors() -> tuple[dict[str, int], set[frozenset[str]]]:
    """Each floor's height (0 at the bottom) and the pairs of one floor that must not meet
    (joined by ``|``; those joined by ``:`` may import each other)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["type"] == "layers" and c["containers"] == ["mediagen"]
    )
    height: dict[str, int] = {}
    apart: set[frozenset[str]] = set()
    for level, layer in enumerate(reversed(contract["layers"])):
        independent = "|" in layer
        names = [n.strip() for n in layer.replace("|", ":").split(":")]
        for name in names:
            height[name] = level
        if independent:
            apart |= {frozenset((a, b)) for a in names for b in names if a != b}
    return height, apart


def _floor_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None  # the package root is the facade, on no floor


def floor_breaches() -> list[str]:
    height, apart = _floors()
    graph = grimp.build_graph("mediagen", exclude_type_checking_imports=False, cache_dir=None)
    breaches = []
    for importer in sorted(graph.modules):
        here = _floor_of(importer)
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            there = _floor_of(imported)
            if here is None or there is None or here == there:
                continue
            up = height[there] > height[here]
            if up or frozenset((here, there)) in apart:
                breaches.append(f"{importer} -> {imported} ({here} may not import {there})")
    return breaches


def test_every_floor_is_named_in_the_contract():
    """A package or module added beside the floors is given one, or nothing checks its imports."""
    height, _ = _floors()
    top = ROOT / "src" / "mediagen"
    packages = {p.parent.name for p in top.glob("*/__init__.py")}
    modules = {p.stem for p in top.glob("*.py")} - {"__init__"}
    assert (packages | modules) - set(height) == set()


def test_imports_between_floors_point_down_type_only_ones_included():
    assert floor_breaches() == []

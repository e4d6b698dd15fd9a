"""mediagen's imports go one way, and no function is too tangled to follow: every check of
the import graph, on one graph built once.

- The layers of CONTRIBUTING.md: import-linter's contracts in pyproject.toml (the imports that
  run), run here so the test command enforces them, as ``lint-imports`` does in CI.
- The floors hold for type-only imports too: an import under ``TYPE_CHECKING`` that points up
  a floor is still a knot an editor, mypy and the next reader follow. The floors are read from
  that same contract; every import between two floors is checked, each one pointing up listed.
- No circle of modules, type-only imports included, each reported as a path of imports with
  their lines; no import of the package root ``mediagen`` from a module under it (the root is
  the facade and may import its subpackages; the floors import the modules they use).
- radon grades every function, method and class; D or worse fails, named with its place.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx
import pytest
from radon.complexity import cc_rank, cc_visit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest brings tomli where the standard library has no TOML reader
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "mediagen"
WORST_RANK = "C"
LINT = (
    "from importlinter.cli import lint_imports; "
    "raise SystemExit(lint_imports(no_cache=True, no_logo=True))"
)


def build_graph(package: str) -> grimp.ImportGraph:
    """Every import of ``package``, at module level, in functions and under TYPE_CHECKING."""
    return grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return build_graph("mediagen")


def test_every_import_points_down_the_layers():
    done = subprocess.run(
        [sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


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


def floor_breaches(graph: grimp.ImportGraph) -> list[str]:
    height, apart = _floors()
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


def test_imports_between_floors_point_down_type_only_ones_included(graph):
    assert floor_breaches(graph) == []


def import_cycles(graph: grimp.ImportGraph) -> list[tuple[list[str], list[str]]]:
    """Each circle of modules (strongly connected): its modules, and the shortest path of
    imports from the first of them back to it."""
    edges = nx.DiGraph(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
    )
    cycles = []
    for component in nx.strongly_connected_components(edges):
        if len(component) < 2:
            continue
        start = min(component)
        inside = edges.subgraph(component)
        back = min(
            (nx.shortest_path(inside, after, start) for after in sorted(inside.successors(start))),
            key=len,
        )
        cycles.append((sorted(component), [start, *back]))
    return sorted(cycles)


def describe_path(graph: grimp.ImportGraph, path: list[str]) -> str:
    """``a:12 -> b:3 -> a``: each module with the line that imports the next one."""
    steps = []
    for importer, imported in itertools.pairwise(path):
        details = graph.get_import_details(importer=importer, imported=imported)
        lines = ",".join(str(d["line_number"]) for d in details)
        steps.append(f"{importer}:{lines}")
    return " -> ".join([*steps, path[-1]])


def root_imports(graph: grimp.ImportGraph, root: str) -> list[str]:
    """Every import of the package ``root`` itself by a module under it, with its line."""
    found = []
    for importer in sorted(graph.find_modules_that_directly_import(root)):
        for detail in graph.get_import_details(importer=importer, imported=root):
            found.append(f"{importer}:{detail['line_number']}: {detail['line_contents']}")
    return found


def tangled_functions(source: Path) -> list[str]:
    """Functions, methods and classes of every file under ``source`` that radon grades D-F."""
    found = []
    for path in sorted(source.rglob("*.py")):
        for block in cc_visit(path.read_text(encoding="utf-8")):
            rank = cc_rank(block.complexity)
            if rank > WORST_RANK:
                where = path.relative_to(source.parent)
                found.append(
                    f"{where}:{block.lineno} {block.fullname} - {rank} ({block.complexity})"
                )
    return found


def test_no_import_cycle_in_mediagen_type_only_imports_included(graph):
    cycles = [
        f"{len(modules)} modules: {', '.join(modules)}\n  for one: {describe_path(graph, path)}"
        for modules, path in import_cycles(graph)
    ]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_nothing_under_the_package_root_imports_it(graph):
    found = root_imports(graph, "mediagen")
    assert not found, "imports of the package root from below it:\n" + "\n".join(found)


def test_no_function_is_graded_d_or_worse():
    found = tangled_functions(SOURCE)
    assert not found, "radon grades these D or worse:\n" + "\n".join(found)


def test_the_checks_find_a_type_only_cycle_an_import_of_the_root_and_a_tangle(
    tmp_path, monkeypatch
):
    """The three checks above on a package made to break each rule: they say where."""
    package = tmp_path / "tangled"
    package.mkdir()
    (package / "__init__.py").write_text("from tangled import low\n")
    (package / "low.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from tangled.high import High\n"
    )
    (package / "high.py").write_text("import tangled\nfrom tangled import low\n\nclass High: ...\n")
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(25))
    (package / "knot.py").write_text(f"def knot(x):\n{branches}    return -1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tangled", raising=False)

    tangled = build_graph("tangled")

    cycles = import_cycles(tangled)
    assert cycles == [
        (
            ["tangled", "tangled.high", "tangled.low"],
            ["tangled", "tangled.low", "tangled.high", "tangled"],
        )
    ]
    assert describe_path(tangled, cycles[0][1]) == (
        "tangled:1 -> tangled.low:4 -> tangled.high:1 -> tangled"
    )
    assert root_imports(tangled, "tangled") == ["tangled.high:1: import tangled"]
    assert tangled_functions(package) == ["tangled/knot.py:1 knot - D (26)"]

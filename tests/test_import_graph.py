"""mediagen's imports go one way, and no function is too tangled to follow.

import-linter (tests/test_layers.py) checks the layers with the imports that run; this test
reads the whole graph (grimp), imports made only for type checkers included, so a circle kept
alive by an annotation fails too. Each circle is reported as a path of imports with their
lines, and so is every import of the package root ``mediagen`` from a module under it: the
root is the facade (``mediagen.Client``, ``mediagen.studio()``...) and may import its
subpackages, while the floors below import the modules they use. The complexity report
(radon) grades every function, method and class; D or worse fails, named with its place.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import grimp
import networkx as nx
from radon.complexity import cc_rank, cc_visit

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "mediagen"
WORST_RANK = "C"


def build_graph(package: str) -> grimp.ImportGraph:
    """Every import of ``package``, at module level, in functions and under TYPE_CHECKING."""
    return grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)


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


def test_no_import_cycle_in_mediagen_type_only_imports_included():
    graph = build_graph("mediagen")
    cycles = [
        f"{len(modules)} modules: {', '.join(modules)}\n  for one: {describe_path(graph, path)}"
        for modules, path in import_cycles(graph)
    ]
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_nothing_under_the_package_root_imports_it():
    found = root_imports(build_graph("mediagen"), "mediagen")
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

    graph = build_graph("tangled")

    cycles = import_cycles(graph)
    assert cycles == [
        (
            ["tangled", "tangled.high", "tangled.low"],
            ["tangled", "tangled.low", "tangled.high", "tangled"],
        )
    ]
    assert describe_path(graph, cycles[0][1]) == (
        "tangled:1 -> tangled.low:4 -> tangled.high:1 -> tangled"
    )
    assert root_imports(graph, "tangled") == ["tangled.high:1: import tangled"]
    assert tangled_functions(package) == ["tangled/knot.py:1 knot - D (26)"]

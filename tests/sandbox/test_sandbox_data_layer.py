"""Every SQL statement of the sandbox lives in its data-access layer, ``mediagen_sandbox.db``.

Read from the source as a reviewer would: any string (f-strings included) that opens like a SQL
statement, in any module outside ``db/``, is a statement that escaped the layer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import mediagen_sandbox

PACKAGE = Path(mediagen_sandbox.__file__).parent
SQL = re.compile(
    # The project writes SQL keywords in capitals; prose ("Create an organization") is not SQL.
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|ALTER|DROP|PRAGMA|BEGIN|WITH)\s"
)


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal, with the literal parts of f-strings (the walk reaches those too)."""
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


def _statements_outside_the_layer() -> list[str]:
    escaped = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).parts[0] == "db":
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, text in _strings(tree):
            if SQL.match(text):
                escaped.append(f"{path.relative_to(PACKAGE)}:{line}: {text[:60]!r}")
    return escaped


def test_no_sql_outside_the_data_layer():
    assert _statements_outside_the_layer() == []


def test_the_check_sees_sql_where_it_hides(tmp_path):
    source = (
        'x = f"SELECT {cols} FROM t"\n'
        'y = ("UPDATE t SET a = 1 " "WHERE b = ?")\n'
        'z = "Create an organization"\n'
    )
    found = sorted(text for _line, text in _strings(ast.parse(source)) if SQL.match(text))
    assert found == ["SELECT ", "UPDATE t SET a = 1 WHERE b = ?"]


def test_the_layer_holds_the_statements():
    inside = [
        text
        for path in (PACKAGE / "db").glob("*.py")
        for _line, text in _strings(ast.parse(path.read_text()))
        if SQL.match(text)
    ]
    assert len(inside) > 40  # the layer is where the statements went, not nowhere

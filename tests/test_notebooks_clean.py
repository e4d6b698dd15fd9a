"""Every notebook in ``notebooks/`` is safe to publish: no API key, no saved widget state, no
absolute local path.

Notebooks are executed against a sandbox to store their outputs, so a key could leak through an
output (a printed environment, a repr, a request header), widget state could be saved with them
(large, and it can hold anything a widget ever had), and a traceback or a printed path could
carry the author's directories. This checks the files as committed.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

#: Shapes a secret takes in text: a sandbox key, a bearer header, a key assigned in code or env.
SECRET_PATTERNS = [
    re.compile(r"mgsk_[A-Za-z0-9_\-]{8,}"),
    re.compile(r"Bearer\s+[A-Za-z0-9_\-\.]{8,}"),
    re.compile(r"MEDIAGEN_API_KEY\s*[=:]\s*['\"]?[A-Za-z0-9_\-]{8,}"),
    re.compile(r"MEDIAGEN_SANDBOX_ADMIN_TOKEN\s*[=:]\s*['\"]?[A-Za-z0-9_\-]{8,}"),
    re.compile(r"api_key\s*=\s*['\"][^'\"]{8,}['\"]"),
    re.compile(r"X-Admin-Token", re.IGNORECASE),
]
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"


def local_paths() -> list[str]:
    """Directories of this machine that must not appear in a published notebook."""
    places = {str(NOTEBOOKS.parent), str(Path.home()), sys.prefix, sys.base_prefix}
    return sorted(p.rstrip("/") + "/" for p in places if len(p.strip("/")) > 1)


def problems(notebook: dict, text: str) -> list[str]:
    """What makes one notebook unsafe to publish (empty when it is clean)."""
    found = []
    if "widgets" in notebook.get("metadata", {}):
        found.append("saved widget state in metadata.widgets")
    if WIDGET_STATE_MIME in text:
        found.append(f"saved widget state ({WIDGET_STATE_MIME})")
    for pattern in SECRET_PATTERNS:
        match = pattern.search(text)
        if match:
            found.append(f"secret-looking text {match.group(0)[:12]}...")
    for name in ("MEDIAGEN_API_KEY", "MEDIAGEN_SANDBOX_ADMIN_TOKEN"):
        value = os.environ.get(name)
        if value and len(value) >= 8 and value in text:
            found.append(f"the value of ${name}")
    for place in local_paths():
        if place in text:
            found.append(f"an absolute local path under {place}")
    return found


def notebook_paths() -> list[Path]:
    return sorted(p for p in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def test_there_are_notebooks_to_check():
    assert len(notebook_paths()) >= 6, "the tutorial notebooks are missing from notebooks/"


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.name)
def test_notebook_has_no_key_and_no_widget_state(path: Path):
    text = path.read_text(encoding="utf-8")
    assert problems(json.loads(text), text) == []


def test_notebook_has_stored_outputs_and_connects_from_the_environment():
    for path in notebook_paths():
        notebook = json.loads(path.read_text(encoding="utf-8"))
        code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        assert code, f"{path.name} has no code"
        assert all(c.get("execution_count") for c in code), f"{path.name} was not executed"
        source = "".join("".join(c["source"]) for c in code)
        assert "api_key=" not in source.replace(" ", ""), f"{path.name} passes a key in code"


def test_the_check_catches_a_leak():
    key = "mgsk_" + "A1b2C3d4" * 5
    dirty = {"metadata": {"widgets": {WIDGET_STATE_MIME: {"state": {}}}}, "cells": []}
    text = json.dumps(dirty) + f' "Authorization: Bearer {key}"'
    found = problems(dirty, text)
    assert "saved widget state in metadata.widgets" in found
    assert any(f.startswith("secret-looking text mgsk_") for f in found)
    assert any(f.startswith("secret-looking text Bearer") for f in found)
    assert problems({"metadata": {}}, '{"text": "balance 880"}') == []
    traceback = f'"File {NOTEBOOKS.parent}/src/mediagen/client/_drivers.py:128"'
    assert any(f.startswith("an absolute local path") for f in problems({}, traceback))

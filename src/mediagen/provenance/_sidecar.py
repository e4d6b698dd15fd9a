"""The sidecar: ``<file>.mediagen.json``, written beside every saved output.

C2PA's sidecar convention reserves ``<file>.c2pa`` for a binary manifest store, and a store
exists only once it is signed; an unsigned record there would read as a broken manifest to
every C2PA tool. So the record that must exist for every file, signed or not, is JSON under a
name of mediagen's own, and a signed manifest goes into the file itself, where it travels with
a copy. The sidecar also names the saved file's own SHA-256, so an unsigned file's tampering
shows too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mediagen.local._files import write_atomic

SUFFIX = ".mediagen.json"


def sidecar_of(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def write_sidecar(path: Path, content: dict[str, Any]) -> Path:
    text = json.dumps(content, indent=1, sort_keys=True)
    return write_atomic(sidecar_of(path), text.encode("utf-8"))


def read_sidecar(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(sidecar_of(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def sealed_as(path: Path) -> str:
    """``signed`` or ``unsigned`` as the file's sidecar says, ``none`` without one: what a
    table run's row records without reading the file again (``verify`` checks it)."""
    sidecar = read_sidecar(path)
    if sidecar is None:
        return "none"
    return "signed" if sidecar.get("signed") else "unsigned"

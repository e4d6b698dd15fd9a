"""The output cache's files: one per output, named after its asset id, never half written.

Output URLs are temporary, so the client keeps each output it downloads in
``<cache_dir>/outputs/``. Each file is named after the output's asset id (unique, so two
outputs never share a name), with the suffix of its media type. Files get there through
:func:`mediagen.local._files.write_atomic`; a name a server suggests for a saved copy is
reduced to a plain name inside the target directory.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Protocol

from mediagen.local._files import sweep_leftovers
from mediagen.wire import _names as _wire


class Output(Protocol):
    """What naming an output's file reads of it (a ``GenerationOutput``)."""

    asset_id: str | None
    url: str | None
    filename: str | None
    content_type: str | None


_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")
#: longest file name made from a server's suggestion (file systems allow 255 bytes)
MAX_NAME = 150


class OutputCache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.outputs = self.root / "outputs"

    def __repr__(self) -> str:
        return f"OutputCache({str(self.root)!r})"

    def path_for(self, output: Output) -> Path:
        key = output.asset_id
        if not key:
            source = (output.url or "").split("?", 1)[0]
            key = "url_" + hashlib.sha256(source.encode()).hexdigest()[:24]
        return self.outputs / (_SAFE.sub("_", key) + suffix_of(output))

    def lookup(self, output: Output) -> Path | None:
        path = self.path_for(output)
        return path if is_kept(path) else None


def is_kept(path: Path) -> bool:
    """A cached file counts only if it has bytes (an empty one is never a valid output)."""
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def _plain_suffix(name: str) -> str:
    suffix = Path(name).suffix.lower()
    return suffix if _SUFFIX.fullmatch(suffix) else ""


def suffix_of(output: Output) -> str:
    if output.filename and _plain_suffix(output.filename):
        return _plain_suffix(output.filename)
    if output.content_type in _wire.CONTENT_TYPE_SUFFIXES:
        return _wire.CONTENT_TYPE_SUFFIXES[output.content_type]
    return _plain_suffix((output.url or "").split("?", 1)[0])


def safe_name(suggested: str | None, fallback: str) -> str:
    """A plain file name from a server's suggestion: no directories, no ``.``/``..``, no
    hidden or over-long names; ``fallback`` when nothing usable is left."""
    name = _SAFE.sub("_", Path((suggested or "").replace("\\", "/")).name).lstrip(".")
    if len(name) > MAX_NAME:
        suffix = _plain_suffix(name)
        name = name[: MAX_NAME - len(suffix)] + suffix
    return name if name.strip("._-") else fallback


def make_directory(path: Path) -> None:
    """``path`` made if missing, without what killed writers left in it."""
    path.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(path)


def destination(output: Output, cached: Path, target: str | Path) -> Path:
    """``target`` is a directory (existing, or ending in a separator) or a file name."""
    text = str(target)
    path = Path(target).expanduser()
    if path.is_dir() or text.endswith(("/", os.sep)) or not path.suffix:
        return path / safe_name(output.filename, cached.name)
    return path

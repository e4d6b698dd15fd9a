"""Writing files so that a crash never leaves half of one: one helper for every writer.

A file is written under a temporary name beside its target (``.<name>.part-<pid>-<random>``),
then renamed over it, which is atomic: a reader sees the old file or the new one, never a mix.
Any exception removes the temporary file; a process killed mid-write (SIGTERM, kill -9, a
kernel restart) runs no cleanup, so :func:`sweep_leftovers` removes the temporary files of
processes no longer running. The journal's compaction and the history's tables ask for
``durable=True`` (flushed to disk, the directory too); the output cache does not (a lost
output is downloaded again, and ``fsync`` on every output would slow a table run).
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

#: ``.<name>.part-<pid>-<random>``: a file being written, until it is renamed into place
_PART = re.compile(r"\..+\.part-(\d+)-[0-9a-f]{8}")
#: the directories whose leftovers this process has swept (once each is enough)
_swept: set[Path] = set()


def temp_for(path: Path) -> Path:
    """The temporary name beside ``path`` that this process writes it under."""
    return path.with_name(f".{path.name}.part-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def write_atomic(
    path: Path, data: bytes | Callable[[Path], object], *, durable: bool = False
) -> Path:
    """``path`` holds ``data`` (bytes, or a function that writes the file it is given), or
    is as it was. ``durable``: flushed to disk with its directory before this returns."""
    temp = temp_for(path)
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # private from birth
        if callable(data):
            data(temp)
        else:
            temp.write_bytes(data)
        if durable:
            _fsync(temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if durable:
        sync_directory(path.parent)
    return path


def copy_atomic(source: Path, dest: Path) -> Path:
    """``dest`` a copy of ``source`` (nothing to do when they are the same file)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() and os.path.samefile(source, dest):
        return dest
    return write_atomic(dest, lambda temp: shutil.copyfile(source, temp))


def append_durable(path: Path, lines: bytes) -> None:
    """Append ``lines`` to ``path`` and flush them to disk; never glued onto a torn last line
    (a writer killed mid-append leaves one)."""
    if not lines:
        return
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            lines = b"\n" + lines
        os.write(fd, lines)
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_directory(directory: Path) -> None:
    """Flush a rename in ``directory`` to disk (where the platform opens directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def leftovers(directory: Path, name: str) -> Iterable[Path]:
    """The temporary files of writes of ``directory / name``, by any process."""
    return directory.glob(f".{name}.part-*")


def sweep_leftovers(directory: Path) -> None:
    """Remove the temporary files that processes no longer running left in ``directory``.
    Once per directory per process; a temporary file of a live process (another kernel
    writing) is left alone."""
    if directory in _swept:
        return
    _swept.add(directory)
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        found = _PART.fullmatch(name)
        if found and process_gone(int(found.group(1))):
            (directory / name).unlink(missing_ok=True)


def process_gone(pid: int) -> bool:
    """True when no process ``pid`` runs on this machine (this one always runs; another
    user's, or one a platform cannot ask about, is taken as running)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False

"""The output cache: generation outputs downloaded promptly, keyed by asset id.

Output URLs are temporary, so the client copies each output into ``<cache_dir>/outputs/``
as soon as it sees the generation completed (``wait(download=True)``). Downloads stream to a
temporary file next to the target and are renamed into place (atomic: a crash never leaves a
half file under the final name). What arrives is checked before it is kept: a 2xx after
redirects, not empty, as long as its Content-Length said, and of the output's media type; a
bad download raises :class:`DownloadError`, is never cached, and leaves no temporary file.
An expired URL (403) is refreshed by re-reading the generation, once. A file name the
server suggests is reduced to a plain name inside the target directory.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

from mediagen.client import _requests
from mediagen.client._effects import Blocking, Call, Fetch, Fetched, Flow, Now
from mediagen.client._errors import MediagenError, NotFoundError, PermissionDeniedError
from mediagen.client._journal import process_gone
from mediagen.client._models import Generation, GenerationOutput
from mediagen.wire import _names as _wire

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")
#: longest file name made from a server's suggestion (file systems allow 255 bytes)
MAX_NAME = 150


class DownloadError(MediagenError):
    """An output could not be downloaded (wrong content type, no URL, ...)."""


class OutputCache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.outputs = self.root / "outputs"

    def __repr__(self) -> str:
        return f"OutputCache({str(self.root)!r})"

    def path_for(self, output: GenerationOutput[Any]) -> Path:
        key = output.asset_id
        if not key:
            source = (output.url or "").split("?", 1)[0]
            key = "url_" + hashlib.sha256(source.encode()).hexdigest()[:24]
        return self.outputs / (_SAFE.sub("_", key) + suffix_of(output))

    def lookup(self, output: GenerationOutput[Any]) -> Path | None:
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


def suffix_of(output: GenerationOutput) -> str:
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


#: ``.<name>.part-<pid>-<random>``: a download's file until it is checked and renamed
_PART = re.compile(r"\..+\.part-(\d+)-[0-9a-f]{8}")
#: the directories whose leftovers this process has swept (once each is enough)
_swept: set[Path] = set()


def _temp_for(path: Path) -> Path:
    return path.with_name(f".{path.name}.part-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def sweep_leftovers(directory: Path) -> None:
    """Remove the partial files that downloads of processes no longer running left in
    ``directory``: a download cleans up after itself on any exception, but a process killed
    mid-download (SIGTERM, kill -9, a kernel restart) runs no cleanup. Once per directory per
    process; a partial file of a live process (another kernel downloading) is left alone."""
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


def _major(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower().split("/", 1)[0]


def check_content_type(expected: str | None, got: str | None) -> None:
    if not expected or not got:
        return
    if _major(expected) != _major(got):
        raise DownloadError(f"The download is {got!r}, but the output is {expected!r}; not saved.")


def check_download(output: GenerationOutput, got: Fetched) -> None:
    """Raise DownloadError unless ``got`` can be this output's file."""
    where = (output.url or "").split("?", 1)[0]
    if got.size == 0:
        raise DownloadError(f"The download of {where} is empty; not saved.")
    if got.declared_size is not None and got.declared_size != got.size:
        raise DownloadError(
            f"The download of {where} is {got.size} bytes, but the server announced "
            f"{got.declared_size}; not saved."
        )
    check_content_type(output.content_type, got.content_type)


def _install(temp: Path, final: Path) -> None:
    os.replace(temp, final)


def _write_atomic(data: bytes, final: Path) -> None:
    if not data:
        raise DownloadError("The output's inline data is empty; not saved.")
    final.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_for(final)
    try:
        temp.write_bytes(data)
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _copy_atomic(source: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() and os.path.samefile(source, dest):
        return dest
    temp = _temp_for(dest)
    try:
        shutil.copyfile(source, temp)
        os.replace(temp, dest)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return dest


def _mkdir(path: Path) -> None:
    """``path`` made if missing, without what killed downloads left in it."""
    path.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(path)


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def destination(output: GenerationOutput, cached: Path, target: str | Path) -> Path:
    """``target`` is a directory (existing, or ending in a separator) or a file name."""
    text = str(target)
    path = Path(target).expanduser()
    if path.is_dir() or text.endswith(("/", os.sep)) or not path.suffix:
        return path / safe_name(output.filename, cached.name)
    return path


def download_output(
    client: Any,
    output: GenerationOutput,
    target: str | Path | None = None,
    deadline: float | None = None,
) -> Flow[Path]:
    """Flow: make sure the output is in the cache; copy it to ``target`` if given.

    ``deadline`` (the driver's clock) bounds the download: a wait's timeout covers it too."""
    cache: OutputCache = client._cache
    final = cache.path_for(output)
    if not is_kept(final):
        yield Blocking(_mkdir, (final.parent,))
        if output.b64_json:
            yield Blocking(_write_atomic, (base64.b64decode(output.b64_json), final))
        else:
            yield from _fetch_into(client, output, final, deadline)
    if target is None:
        return final
    dest = destination(output, final, target)
    return (yield Blocking(_copy_atomic, (final, dest)))


def save_output(
    client: Any,
    output: GenerationOutput[Any],
    directory: str | Path,
    deadline: float | None = None,
    *,
    name: str | None = None,
) -> Flow[Path]:
    """Flow: the output saved in ``directory`` as ``name`` (default: the name
    ``download(directory)`` gives it) with no copy added to the cache, so it takes the disk
    once: copied from the cache when the cache holds it already, else downloaded straight into
    ``directory`` (streamed, atomic, checked and refreshed when expired, as every download is)."""
    cached = client._cache.path_for(output)
    dest = Path(directory).expanduser() / (name or safe_name(output.filename, cached.name))
    if is_kept(cached):
        return (yield Blocking(_copy_atomic, (cached, dest)))
    yield Blocking(_mkdir, (dest.parent,))
    if output.b64_json:
        yield Blocking(_write_atomic, (base64.b64decode(output.b64_json), dest))
        return dest
    return (yield from _fetch_into(client, output, dest, deadline))


def _fetch_into(client: Any, output: GenerationOutput, final: Path, deadline: float | None):
    """Flow: the output downloaded to ``final`` by ``deadline``; without one, within the
    client's ``timeout``, so a server that trickles bytes (each read in time, the whole never)
    cannot hold a call, a table run or a server's handler for ever."""
    if deadline is None:
        deadline = (yield Now()) + client._config.timeout
    refreshed = False
    while True:
        if not output.url:
            raise DownloadError(f"output {output.asset_id} has no URL")
        temp = _temp_for(final)
        try:
            got = yield Fetch(output.url, temp, deadline)
        except (PermissionDeniedError, NotFoundError):
            yield Blocking(_unlink, (temp,))
            if refreshed or not output.generation_id:
                raise
            # The URL expired (or was rotated): re-read the generation for a fresh one.
            data = yield Call(_requests.get_generation(output.generation_id), deadline=deadline)
            fresh = Generation.from_dict(data, client=client)
            match = next((o for o in fresh.outputs if o.asset_id == output.asset_id), None)
            if match is None or not match.url:
                raise
            output.url = match.url
            output.raw["url"] = match.url
            refreshed = True
            continue
        except BaseException:
            yield Blocking(_unlink, (temp,))
            raise
        try:
            check_download(output, got)
        except DownloadError:
            yield Blocking(_unlink, (temp,))
            raise
        yield Blocking(_install, (temp, final))
        return final


def save_generation(
    client: Any,
    generation: Generation[Any],
    directory: str | Path | None,
    deadline: float | None = None,
) -> Flow[list[Path]]:
    """Flow: every output of ``generation`` into the cache (and ``directory``); the paths."""
    paths = []
    for output in generation.outputs:
        paths.append((yield from download_output(client, output, directory, deadline)))
    return paths


def save_within(
    client: Any,
    generation: Generation[Any],
    directory: str | Path | None,
    timeout: float | None,
) -> Flow[list[Path]]:
    """Flow: :func:`save_generation` with ``timeout`` seconds as its deadline (None: none)."""
    deadline = None if timeout is None else (yield Now()) + timeout
    return (yield from save_generation(client, generation, directory, deadline))

"""From the client's ``GenerationOutput`` to a :class:`MediaItem` over its local cached copy.

One place knows how the client exposes the local copy, so the players, the job card, the
gallery and the HTML reprs agree (and one edit follows a change in the client).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mediagen.widgets._media import MediaItem, make_item

if TYPE_CHECKING:
    from mediagen.client import GenerationOutput


def local_copy(output: Any) -> Path:
    """The path of the output's bytes on this machine, downloading them first if needed."""
    for name in ("local_path", "cached_path", "path"):
        value = getattr(output, name, None)
        if callable(value):
            value = value()
        if value and Path(value).is_file():
            return Path(value)
    fetch = getattr(output, "download", None) or getattr(output, "fetch", None)
    if callable(fetch):
        return Path(fetch())
    raise LookupError("This output has no local copy and cannot be downloaded here.")


async def fetched(output: GenerationOutput[Any]) -> Path:
    """The output's bytes on this machine, on the widgets' loop: its cached copy, a copy its
    JSON names (``local_path``, an output made elsewhere), else downloaded into the client's
    cache first (awaited when the output is an ``AsyncClient``'s)."""
    kept = output.local_path or output.get("local_path")
    if kept and Path(kept).is_file():  # noqa: ASYNC240 (one stat of a local file)
        return Path(kept)
    result: Any = output.download()
    if inspect.isawaitable(result):  # bound to an AsyncClient
        result = await result
    return Path(result)


async def saved(output: GenerationOutput[Any], directory: str | Path) -> Path:
    """Copy the output into ``directory`` (created if needed) with the client's streamed,
    atomic save; the saved file's path (awaited when the output is an ``AsyncClient``'s)."""
    result: Any = output.save(str(directory))
    if inspect.isawaitable(result):
        result = await result
    return Path(result)


async def credentials(path: Path) -> dict[str, Any] | None:
    """What the card says of the local copy's content credentials (None: it has none), read
    on a worker thread: checking a signature hashes the whole file."""
    import asyncio

    from mediagen.provenance._verify import said, summary

    try:
        return await asyncio.to_thread(summary, path)
    except (OSError, ValueError) as exc:  # an unreadable sidecar is said, not raised
        return said("unreadable", code=str(exc))


def item_at(path: str | Path, output: GenerationOutput[Any], label: str) -> MediaItem:
    """A playable item for ``output`` whose local copy is ``path`` (already fetched)."""
    return make_item(
        path,
        output.content_type,
        label=label,
        width=output.width,
        height=output.height,
        duration_seconds=output.duration_seconds,
    )


def output_item(output: Any, *, label: str = "") -> MediaItem:
    """A playable item for a generation output (its bytes come from the local copy)."""
    path = local_copy(output)
    return make_item(
        path,
        getattr(output, "content_type", None),
        label=label or getattr(output, "filename", None) or path.name,
        width=getattr(output, "width", None),
        height=getattr(output, "height", None),
        duration_seconds=getattr(output, "duration_seconds", None),
    )

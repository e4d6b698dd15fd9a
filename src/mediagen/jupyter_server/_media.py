"""Generated files for the page, downloaded once by the server and served from its disk.

An output's URL is temporary (and signed); the server extension downloads the file with
mediagen's client (into the client's cache folder, where a kernel's ``download()`` puts it too)
and serves it from there, so the viewer and the thumbnails keep working after the URL expires
and the browser never sees a URL the service made.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mediagen.client import AsyncClient


class MediaCache:
    """``(generation id, output index)`` -> the downloaded file; one download per file."""

    def __init__(self) -> None:
        self._paths: dict[tuple[str, int], Path] = {}
        self._pending: dict[tuple[str, int], asyncio.Future[Path]] = {}
        self._client: AsyncClient | None = None

    async def path(self, generation_id: str, index: int) -> Path:
        key = (generation_id, index)
        known = self._paths.get(key)
        if known is not None and known.is_file():
            return known
        pending = self._pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._download(generation_id, index))
            self._pending[key] = pending
            pending.add_done_callback(lambda _: self._pending.pop(key, None))
        path = await asyncio.shield(pending)
        self._paths[key] = path
        return path

    async def _download(self, generation_id: str, index: int) -> Path:
        if self._client is None:
            from mediagen.client import AsyncClient

            self._client = AsyncClient(journal=False)
        gen = await self._client.generations.get(generation_id)  # a fresh URL
        if not 0 <= index < len(gen.outputs):
            raise LookupError(f"generation {generation_id} has no output {index}")
        return Path(await gen.outputs[index].download())

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

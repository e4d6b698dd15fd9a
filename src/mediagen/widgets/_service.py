"""What the widgets need from the client, in one place (async, on the widgets' loop).

Widgets never call the client directly: they call this small adapter, so a change in the
client's surface is one edit here. It holds a ``mediagen.AsyncClient`` per event loop (an
httpx async client belongs to the loop that made it) built from the sync client's settings;
the API key stays inside the client objects and never reaches a trait.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any

from mediagen.client import AsyncClient, Client, Generation
from mediagen.widgets import _tasks

TERMINAL = ("completed", "failed")


class Service:
    """The client operations the widgets use.

    A job card polls every ``poll_interval`` seconds at first, backing off to ``poll_cap``
    (2 s -> 5 s by default: the spec's polling interval, which counts against the key's
    rate limit).
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        async_client: AsyncClient | None = None,
        poll_interval: float = 2.0,
        poll_cap: float = 5.0,
        cache_dir: str | Path | None = None,
    ) -> None:
        if client is None and async_client is None:
            client = Client()
        self.client = client
        self._given_async = async_client
        self._async: dict[int, AsyncClient] = {}
        self.poll_interval = poll_interval
        self.poll_cap = max(poll_cap, poll_interval)
        self.cache_dir = Path(cache_dir) if cache_dir else None

    # -- clients ---------------------------------------------------------------------------

    def aclient(self) -> AsyncClient:
        """The AsyncClient for the running loop (made on first use from the sync client)."""
        if self._given_async is not None:
            return self._given_async
        assert self.client is not None  # one of the two is always given
        loop = asyncio.get_running_loop()
        found = self._async.get(id(loop))
        if found is None:
            found = self.client.to_async()
            self._async[id(loop)] = found
        return found

    @property
    def owner(self) -> Client | AsyncClient:
        """The client the widgets were given (its journal, its history store)."""
        found = self.client if self.client is not None else self._given_async
        assert found is not None
        return found

    async def aclose(self) -> None:
        """Close the AsyncClient of the running loop (if this service made one)."""
        made = self._async.pop(id(asyncio.get_running_loop()), None)
        if made is not None:
            await made.aclose()

    # -- catalog, prices, credits ----------------------------------------------------------

    async def models(self) -> list[dict[str, Any]]:
        """The catalog, each model as its JSON object."""
        return [m.to_dict() for m in await self.aclient().models.list()]

    def models_started(self) -> Awaitable[list[dict[str, Any]]]:
        """The catalog, asked for now: with the blocking client on a worker thread, so the
        answer travels while the widgets that show it are still being built; await it on the
        loop. Without a blocking client, the asyncio one asks when it is awaited."""
        client = self.client
        if client is None:
            return self.models()
        return _tasks.started(lambda: [m.to_dict() for m in client.models.list()])

    async def estimate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The service's estimate of ``request``, as its JSON object."""
        return (await self.aclient().models.estimate_request(dict(request))).to_dict()

    async def credits(self) -> dict[str, Any]:
        """The credits, as their JSON object."""
        return (await self.aclient().credits.get()).to_dict()

    # -- generations -----------------------------------------------------------------------

    async def submit(
        self, kind: str, request: Mapping[str, Any], idempotency_key: str
    ) -> Generation[AsyncClient]:
        """Submit ``request`` as a ``kind`` (image, video, audio) job with ``idempotency_key``."""
        resource = self.aclient().resource(kind)
        return await resource.create(**{**request, "idempotency_key": idempotency_key})

    async def get(self, generation_id: str) -> Generation[AsyncClient]:
        """The generation ``generation_id`` as it is now."""
        return await self.aclient().generations.get(generation_id)

    async def wait(self, generation: Any, on_update: Any = None) -> Any:
        """Poll until terminal with the client's own wait: it journals the end state (so a
        restarted kernel does not re-attach to a finished job) and caches the outputs."""
        return await self.aclient().generations.wait(
            generation, on_update=on_update, poll_interval=(self.poll_interval, self.poll_cap)
        )

    async def recent(self, limit: int = 200, **filters: Any) -> list[Generation[AsyncClient]]:
        """The latest ``limit`` generations (newest first), filtered as ``generations.list``."""
        found: list[Generation[AsyncClient]] = []
        async for generation in self.aclient().generations.list(**filters):
            found.append(generation)
            if len(found) >= limit:
                break
        return found

    async def pending_journal(self) -> list[Generation[AsyncClient]]:
        """Generations this machine submitted that were still pending (re-attach after restart)."""
        return list(await self.aclient().generations.resume())

    def journal(self) -> Any:
        """The client's request journal (None when journaling is off)."""
        return self.owner.journal

    def expected_seconds(self, model: str | None) -> float | None:
        """How long ``model`` usually takes for this user (``mediagen.history``: the local
        history store when there is one, else this machine's journal)."""
        from mediagen import history

        return history.expected_seconds(self.owner, model)

    def forecast_note(self, request: dict[str, Any], *, sync: bool) -> str:
        """How long ``request`` will likely take and how often it fails, from the user's own
        history (``mediagen.history.request_note``). Blocking (files, maybe a sync): callers
        run it on a worker thread, off the kernel's loop."""
        from mediagen import history

        return history.request_note(self.owner._sync_twin(), request, sync=sync)

    def journal_requests(self) -> dict[str, dict[str, Any]]:
        """Per generation id, the request body this machine sent (from the client's journal).

        The API's generation does not echo its settings; the journal kept them.
        """
        journal = self.owner.journal
        if journal is None:
            return {}
        return {
            gid: record["request"]
            for gid, record in journal.latest().items()
            if isinstance(record.get("request"), Mapping)
        }

    # -- files -----------------------------------------------------------------------------

    async def upload(self, name: str, content_type: str, data: bytes) -> str:
        """Upload ``data`` as a file named ``name``; returns its asset id."""
        uploaded = await self.aclient().uploads.upload(
            data, filename=name, content_type=content_type
        )
        return uploaded.asset_id

    async def local_copy(self, output: Any) -> Path:
        """The output's bytes on this machine (downloaded into the client's cache if needed)."""
        # a client's output knows its cached copy; an output as JSON may name one
        if isinstance(output, Mapping):
            kept = output.get("local_path")
        else:
            kept = getattr(output, "local_path", None)
        if kept and Path(kept).is_file():  # noqa: ASYNC240 (one stat of a local file)
            return Path(kept)
        download = getattr(output, "download", None)
        if callable(download):
            result = download()
            if inspect.isawaitable(result):  # bound to an AsyncClient
                result = await result
            return Path(result)
        directory = self.cache_dir or Path.cwd() / "mediagen-outputs"
        return await self.save(output, directory)

    async def save(self, output: Any, directory: str | Path) -> Path:
        """Copy the output into ``directory`` (created if needed); the saved file's path."""
        save = getattr(output, "save", None)
        if not callable(save):
            raise TypeError("this output cannot be saved: it is not bound to a client")
        # bound to the AsyncClient (the widgets' own), save returns an awaitable
        result = save(str(directory))
        return Path(await result if inspect.isawaitable(result) else result)

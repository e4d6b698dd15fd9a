"""What the widgets need from the client, in one place (async, on the widgets' loop).

Widgets never call the client directly: they call this small adapter, so a change in the
client's surface is one edit here. It holds a ``mediagen.AsyncClient`` per event loop (an
httpx async client belongs to the loop that made it) built from the sync client's settings;
the API key stays inside the client objects and never reaches a trait.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any

from mediagen.widgets import _tasks
from mediagen.wire._fields import as_json, read_field

KIND_RESOURCES = {"image": "images", "video": "videos", "audio": "audio"}
TERMINAL = ("completed", "failed")


class Service:
    """The client operations the widgets use.

    A job card polls every ``poll_interval`` seconds at first, backing off to ``poll_cap``
    (2 s -> 5 s by default: the spec's polling interval, which counts against the key's
    rate limit).
    """

    def __init__(
        self,
        client: Any = None,
        *,
        async_client: Any = None,
        poll_interval: float = 2.0,
        poll_cap: float = 5.0,
        cache_dir: str | Path | None = None,
    ) -> None:
        if client is None and async_client is None:
            from mediagen.client import Client

            client = Client()
        self.client = client
        self._given_async = async_client
        self._async: dict[int, Any] = {}
        self.poll_interval = poll_interval
        self.poll_cap = max(poll_cap, poll_interval)
        self.cache_dir = Path(cache_dir) if cache_dir else None

    # -- clients ---------------------------------------------------------------------------

    def aclient(self) -> Any:
        """The AsyncClient for the running loop (made on first use from the sync client)."""
        if self._given_async is not None:
            return self._given_async
        loop = asyncio.get_running_loop()
        found = self._async.get(id(loop))
        if found is None:
            found = self._make_async()
            self._async[id(loop)] = found
        return found

    async def aclose(self) -> None:
        """Close the AsyncClient of the running loop (if this service made one)."""
        made = self._async.pop(id(asyncio.get_running_loop()), None)
        if made is not None:
            await made.aclose()

    def _make_async(self) -> Any:
        from mediagen.client import AsyncClient

        for name in ("to_async", "async_client", "as_async"):
            make = getattr(self.client, name, None)
            if callable(make):
                return make()
        return AsyncClient(**_settings(self.client))

    # -- catalog, prices, credits ----------------------------------------------------------

    async def models(self) -> list[dict[str, Any]]:
        """The catalog, each model as its JSON object."""
        return [as_json(m) for m in await self.aclient().models.list()]

    def models_started(self) -> Awaitable[list[dict[str, Any]]]:
        """The catalog, asked for now: with the blocking client on a worker thread, so the
        answer travels while the widgets that show it are still being built; await it on the
        loop. Without a blocking client, the asyncio one asks when it is awaited."""
        blocking = getattr(getattr(self.client, "models", None), "list", None)
        if not callable(blocking):
            return self.models()
        return _tasks.started(lambda: [as_json(m) for m in blocking()])

    async def estimate(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The service's estimate of ``request``, as its JSON object."""
        models = self.aclient().models
        for name in ("estimate_request", "estimate_for"):
            helper = getattr(models, name, None)
            if callable(helper):
                return as_json(await helper(dict(request)))
        raise RuntimeError("the client has no models.estimate_request(request)")

    async def credits(self) -> dict[str, Any]:
        """The credits, as their JSON object."""
        return as_json(await self.aclient().credits.get())

    # -- generations -----------------------------------------------------------------------

    async def submit(self, kind: str, request: Mapping[str, Any], idempotency_key: str) -> Any:
        """Submit ``request`` as a ``kind`` (image, video, audio) job with ``idempotency_key``."""
        resource = getattr(self.aclient(), KIND_RESOURCES[kind])
        return await resource.create(**{**request, "idempotency_key": idempotency_key})

    async def get(self, generation_id: str) -> Any:
        """The generation ``generation_id`` as it is now."""
        return await self.aclient().generations.get(generation_id)

    async def wait(self, generation: Any, on_update: Any = None) -> Any:
        """Poll until terminal with the client's own wait: it journals the end state (so a
        restarted kernel does not re-attach to a finished job) and caches the outputs."""
        return await self.aclient().generations.wait(
            generation, on_update=on_update, poll_interval=(self.poll_interval, self.poll_cap)
        )

    async def recent(self, limit: int = 200, **filters: Any) -> list[Any]:
        """The latest ``limit`` generations (newest first), filtered as ``generations.list``."""
        found: list[Any] = []
        async for generation in self.aclient().generations.list(**filters):
            found.append(generation)
            if len(found) >= limit:
                break
        return found

    async def pending_journal(self) -> list[Any]:
        """Generations this machine submitted that were still pending (re-attach after restart)."""
        generations = self.aclient().generations
        for name in ("resume", "pending"):
            helper = getattr(generations, name, None)
            if callable(helper):
                result = helper()
                if asyncio.iscoroutine(result):
                    result = await result
                return list(result)
        return [g async for g in generations.list(status="pending")]

    def journal(self) -> Any:
        """The client's request journal (None when journaling is off)."""
        owner = self.client if self.client is not None else self._given_async
        return getattr(owner, "journal", None)

    def expected_seconds(self, model: str | None) -> float | None:
        """How long ``model`` usually takes for this user (``mediagen.history``: the local
        history store when there is one, else this machine's journal)."""
        from mediagen import history

        owner = self.client if self.client is not None else self._given_async
        return history.expected_seconds(owner, model)

    def forecast_note(self, request: dict[str, Any], *, sync: bool) -> str:
        """How long ``request`` will likely take and how often it fails, from the user's own
        history (``mediagen.history.request_note``). Blocking (files, maybe a sync): callers
        run it on a worker thread, off the kernel's loop."""
        from mediagen import history

        owner = self.client if self.client is not None else self._given_async
        return history.request_note(owner._sync_twin(), request, sync=sync)

    def journal_requests(self) -> dict[str, dict[str, Any]]:
        """Per generation id, the request body this machine sent (from the client's journal).

        The API's generation does not echo its settings; the journal kept them.
        """
        journal = getattr(
            self.client if self.client is not None else self._given_async, "journal", None
        )
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
        return str(read_field(uploaded, "asset_id") or uploaded)

    async def local_copy(self, output: Any) -> Path:
        """The output's bytes on this machine (downloaded into the client's cache if needed)."""
        for name in ("local_path", "cached_path"):
            value = read_field(output, name)
            if callable(value):
                value = value()
            if value and Path(value).is_file():  # noqa: ASYNC240 (one stat of a local file)
                return Path(value)
        download = getattr(output, "download", None) or getattr(output, "fetch", None)
        if callable(download):
            result = download()
            if asyncio.iscoroutine(result):
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


def _settings(client: Any) -> dict[str, Any]:
    """api_key/base_url of a sync client, to make the matching async one (never logged)."""
    settings: dict[str, Any] = {}
    for public, names in {
        "api_key": ("_api_key", "api_key"),
        "base_url": ("base_url", "_base_url"),
    }.items():
        for name in names:
            value = getattr(client, name, None)
            if value:
                settings[public] = str(value)
                break
    if "base_url" not in settings and os.environ.get("MEDIAGEN_BASE_URL"):
        settings["base_url"] = os.environ["MEDIAGEN_BASE_URL"]
    return settings

"""``mediagen.Client`` and ``mediagen.AsyncClient``: declared together because each builds the
other (``Client.to_async()``, ``AsyncClient.to_sync()``).

What each does is its driver's (``_sync``, ``_async``), over the shared core (``_base``); the
drivers never import each other. Declaring ``AsyncClient`` here loads ``_async`` but not
asyncio: that, and the asyncio resources, load when an ``AsyncClient`` is built.
"""

from __future__ import annotations

from typing import Any

from mediagen.client._async import AsyncDriver
from mediagen.client._sync import SyncDriver


class Client(SyncDriver):
    """The blocking client. ``Client(api_key=None, base_url=None, **options)``.

    ``api_key`` / ``base_url`` default to ``MEDIAGEN_API_KEY`` / ``MEDIAGEN_BASE_URL``.
    Options: ``timeout`` (s, default 60: the deadline of every API request, its retries and
    their pauses included; methods also take their own ``timeout=``), ``max_retries`` (3),
    ``poll_interval`` (``(2, 5)``: start and cap, or one number), ``cache_dir`` (outputs and
    journal), ``journal`` (None: default file under the cache dir; a path; False: off),
    ``http_client`` (your own ``httpx.Client``, e.g. with event hooks), ``validate`` (check
    requests against the catalog before sending), ``download`` (download outputs as soon as
    ``wait`` sees them), ``estimate`` (quote every submit first), ``budget`` (credits),
    ``rate_limit`` (requests per second for this key).
    """

    def to_async(self, **overrides: Any) -> AsyncClient:
        """An ``AsyncClient`` with the same settings (and key); ``overrides`` change options."""
        config = self._config.replace(**overrides) if overrides else self._config
        return AsyncClient(_config=config, budget=self._budget, clock=self._clock)

    def _sync_twin(self) -> Client:
        return self


class AsyncClient(AsyncDriver):
    """The asyncio twin of :class:`Client`: same options, same models, awaitable methods.

    ``async with mediagen.AsyncClient() as client: gen = await client.images.create(...)``;
    ``async for g in client.generations.list(...)``; ``async for g in
    client.generations.watch(gens)``.
    """

    _twin: Client | None

    def to_sync(self) -> Client:
        """A blocking ``Client`` with the same settings."""
        return Client(_config=self._config, budget=self._budget, clock=self._clock)

    def _sync_twin(self) -> Client:
        if self._twin is None:
            self._twin = self.to_sync()
        return self._twin

"""``mediagen.Client`` and ``mediagen.AsyncClient``: declared together because each builds the
other (``Client.to_async()``, ``AsyncClient.to_sync()``).

What each does is its driver's (``_drivers``), over the shared core (``_base``). Declaring
``AsyncClient`` here loads its driver but not asyncio: that, and the resources, load on a
client's first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mediagen._lazy import lazy_exports
from mediagen.client._drivers import AsyncDriver, SyncDriver


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


# The public spellings of the client-generic models, bound to the concrete clients. The
# models and resources are generic over the protocols of ``_effects``, so nothing below the
# clients imports them. Here, above both, type checkers learn what the names users write
# mean: a bare ``Generation`` is ``Generation[Client]`` (``Generation[AsyncClient]`` is
# spelled out), and ``client.generations.list()`` is a ``GenerationList``. At run time each
# name is the class itself, loaded on first use, so a ``Client()`` loads no model.

if TYPE_CHECKING:
    from typing import TypeAlias

    from typing_extensions import TypeVar

    from mediagen.client import _batch, _models, _resources

    #: the client of a model named bare: the blocking ``Client``
    _ClientT = TypeVar("_ClientT", default=Client)

    Generation: TypeAlias = _models.Generation[_ClientT]
    GenerationOutput: TypeAlias = _models.GenerationOutput[_ClientT]
    BatchItem: TypeAlias = _batch.BatchItem[_ClientT]
    BatchResult: TypeAlias = _batch.BatchResult[_ClientT]

    #: what ``Client.generations.list()`` and ``AsyncClient.generations.list()`` return
    GenerationList: TypeAlias = _resources.GenerationList[Client]
    AsyncGenerationList: TypeAlias = _resources.AsyncGenerationList[AsyncClient]
else:
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "Generation": "mediagen.client._models",
            "GenerationOutput": "mediagen.client._models",
            "BatchItem": "mediagen.client._batch",
            "BatchResult": "mediagen.client._batch",
            "GenerationList": "mediagen.client._resources",
            "AsyncGenerationList": "mediagen.client._resources",
        },
    )

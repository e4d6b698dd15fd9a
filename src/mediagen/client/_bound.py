"""The public spellings of the client-generic models, bound to the concrete clients.

The models and resources are generic over the protocols of ``_runners``, so nothing below the
clients imports them. Here, above both, type checkers learn what the names users write mean: a
bare ``Generation`` is ``Generation[Client]`` (``Generation[AsyncClient]`` is spelled out), and
``client.generations.list()`` is a ``GenerationList``. At run time each name is the class
itself (the package imports this module for type checkers only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mediagen.client import _async_resources, _batch, _models, _sync_resources

if TYPE_CHECKING:
    from typing import TypeAlias

    from typing_extensions import TypeVar

    from mediagen.client._clients import AsyncClient, Client

    #: the client of a model named bare: the blocking ``Client``
    _ClientT = TypeVar("_ClientT", default=Client)

    Generation: TypeAlias = _models.Generation[_ClientT]
    GenerationOutput: TypeAlias = _models.GenerationOutput[_ClientT]
    BatchItem: TypeAlias = _batch.BatchItem[_ClientT]
    BatchResult: TypeAlias = _batch.BatchResult[_ClientT]

    #: what ``Client.generations.list()`` and ``AsyncClient.generations.list()`` return
    GenerationList: TypeAlias = _sync_resources.GenerationList[Client]
    AsyncGenerationList: TypeAlias = _async_resources.AsyncGenerationList[AsyncClient]
else:
    Generation = _models.Generation
    GenerationOutput = _models.GenerationOutput
    BatchItem = _batch.BatchItem
    BatchResult = _batch.BatchResult
    GenerationList = _sync_resources.GenerationList
    AsyncGenerationList = _async_resources.AsyncGenerationList

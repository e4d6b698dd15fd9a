"""What a model or a resource calls on the client that made it, as two small protocols.

The models (``Generation``, ``GenerationOutput``, batches) and the resources act through their
client, so their types name it: a ``Client``'s calls return values, an ``AsyncClient``'s
return coroutines. They are generic over these protocols instead of importing the concrete
clients, which sit above them; ``_bound`` (the top of the package) names the public spellings
(``Generation`` is ``Generation[Client]``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from mediagen.client._effects import Flow

_T = TypeVar("_T")


class BlockingClient(Protocol):
    """A client whose calls return their values (``Client``)."""

    def _run(self, flow: Flow[_T]) -> _T: ...

    def _iterate(self, flow: Any) -> Iterator[Any]: ...


class AwaitingClient(Protocol):
    """A client whose calls return coroutines to await (``AsyncClient``)."""

    def _run(self, flow: Flow[_T]) -> Coroutine[Any, Any, _T]: ...

    def _iterate(self, flow: Any) -> AsyncIterator[Any]: ...


#: the blocking client a resource or a model belongs to
BlockingT = TypeVar("BlockingT", bound=BlockingClient)
#: the asyncio client a resource or a model belongs to
AwaitingT = TypeVar("AwaitingT", bound=AwaitingClient)

"""What a client operation asks its driver to do.

Operations (submit, wait, watch, download, upload, ...) are written once, as generators that
``yield`` these effects and receive the results; ``Client`` performs them with blocking I/O and
``AsyncClient`` with ``await``. So the logic of every operation exists exactly once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from mediagen.client._requests import RequestSpec

# what a flow reads of its client, named for type checkers only (all of it sits below here)
if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mediagen.client._budget import Budget
    from mediagen.client._config import ClientConfig
    from mediagen.client._requests import KeyGate, RetryPolicy
    from mediagen.local._cache import OutputCache
    from mediagen.local._journal import Journal


@dataclass(frozen=True)
class Call:
    """Send an API request (auth, retries, rate limiting); the result is the decoded JSON.

    ``deadline`` (on the driver's clock, see :class:`Now`) bounds the whole request, retries
    included. ``persistent`` retries transient failures until then instead of ``max_retries``
    times (a wait riding out an outage).
    """

    spec: RequestSpec
    deadline: float | None = None
    persistent: bool = False


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Fetch:
    """Stream ``url`` (outside ``/v1``; no API key; redirects followed) into ``temp``.

    The result is a :class:`Fetched`; a final status that is not 2xx is an error.
    """

    url: str
    temp: Path
    deadline: float | None = None  # as for Call: the whole download, retries included


@dataclass(frozen=True)
class Fetched:
    """What a download delivered: its Content-Type, the bytes written, the Content-Length."""

    content_type: str | None
    size: int
    declared_size: int | None


@dataclass(frozen=True)
class Put:
    """Stream ``source`` to ``url`` with exactly ``headers``; result: the decoded JSON."""

    url: str
    headers: dict[str, str]
    source: Any  # a _submit.Source (that module sits above this one)
    deadline: float | None = None  # as for Call: the whole upload, retries included


@dataclass(frozen=True)
class Invoke:
    """Call ``fn(*args)`` (a user callback); an awaitable result is awaited by AsyncClient."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Blocking:
    """Run a blocking function (file copies): inline in Client, in a thread in AsyncClient."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Emit:
    """Hand one item to the consumer of an iterating operation (list, watch)."""

    item: Any


@dataclass(frozen=True)
class Now:
    """The driver's monotonic clock (injectable for tests)."""


_T = TypeVar("_T")

#: an operation: yields effects, receives their results, returns a ``_T``
Flow = Generator[Any, Any, _T]

#: what a journal line is about: the kind, the request body, its idempotency key, the
#: generation and the quote (an ``Estimate``); the models sit above this module, so ``Any``
JournalSubject = tuple[str | None, dict[str, Any] | None, str | None, Any, Any]


class Steps(Generic[_T]):
    """The one loop that runs a generator of requests (a flow's effects, a retry plan's
    steps): each request is handed out by iterating, its answer goes back by :meth:`answer`
    or :meth:`fail`, and the generator's return value is :attr:`result` once iteration ends.

    It is the whole of what the blocking and the asyncio drivers share in running a flow; a
    driver's own loop is then only how it performs one request (called, or awaited)::

        steps = Steps(flow)
        for effect in steps:
            try:
                steps.answer(perform(effect))
            except BaseException as exc:  # an interrupt too: the flow cleans up, explains
                steps.fail(exc)
        return steps.result
    """

    __slots__ = ("_error", "_gen", "_value", "result")

    def __init__(self, gen: Generator[Any, Any, _T]) -> None:
        self._gen = gen
        self._value: Any = None
        self._error: BaseException | None = None
        self.result: _T

    def __iter__(self) -> Steps[_T]:
        return self

    def __next__(self) -> Any:
        value, error = self._value, self._error
        self._value, self._error = None, None
        try:
            return self._gen.throw(error) if error is not None else self._gen.send(value)
        except StopIteration as stop:
            self.result = stop.value
            raise StopIteration from None

    def answer(self, value: Any) -> None:
        self._value = value

    def fail(self, error: BaseException) -> None:
        self._error = error


# =================================================================================================
# What a flow reads of the client that runs it.
#
# The flows (``_submit``, ``_wait``, ``_transport``, ``_resources``, ``_batch``) are handed the
# client that runs them; ``_base.BaseClient`` implements what they read, but sits above them, so
# they name this protocol instead. Everything here is read, never assigned.
# =================================================================================================


class ClientCore(Protocol):
    """What a flow reads of its client: settings, budget, clock, retry policy, the key's gate,
    the caches and the request journal (``_base.BaseClient``)."""

    @property
    def _config(self) -> ClientConfig: ...

    @property
    def _budget(self) -> Budget | None: ...

    @property
    def _clock(self) -> Callable[[], float]: ...

    @property
    def _secrets(self) -> tuple[str, ...]: ...

    @property
    def _policy(self) -> RetryPolicy: ...

    @property
    def _gate(self) -> KeyGate: ...

    @property
    def _cache(self) -> OutputCache: ...

    #: catalog entries (``ModelInfo``) by model id
    @property
    def _models_cache(self) -> dict[str, Any]: ...

    #: the request journal (None when it is off)
    @property
    def journal(self) -> Journal | None: ...

    # The journal (its signatures are ``BaseClient``'s).

    def _journal_event(self, event: str, *subject: Unpack[JournalSubject]) -> None: ...

    def _journal_attempt(
        self, kind: str, body: dict[str, Any], key: str, quote: Any, inputs: str | None = None
    ) -> str: ...

    def _journal_lost_inputs(self, kind: str, inputs: str) -> dict[str, Any] | None: ...

    def _journal_unanswered(self) -> list[dict[str, Any]]: ...

    def _journal_finished(self, gen: Any) -> None: ...

    def _journal_pending(self) -> list[dict[str, Any]]: ...

    def _note_request(self, generation_id: str, body: dict[str, Any], quote: Any) -> None: ...

    def _noted_request(self, generation_id: str | None) -> dict[str, Any] | None: ...


# =================================================================================================
# What a model or a resource calls on the client that made it, as two small protocols.
#
# The models (``Generation``, ``GenerationOutput``, batches) and the resources act through their
# client, so their types name it: a ``Client``'s calls return values, an ``AsyncClient``'s
# return coroutines. They are generic over these protocols instead of importing the concrete
# clients, which sit above them; ``_clients`` (the top of the package) names the public spellings
# (``Generation`` is ``Generation[Client]``). Each is a ``ClientCore`` (its resources hand it to
# the flows) with its driver's ``_run`` / ``_iterate`` and its blocking twin (``_sync_twin``:
# the history's table is read blocking, from either client).
# =================================================================================================


class BlockingClient(ClientCore, Protocol):
    """A client whose calls return their values (``Client``)."""

    def _run(self, flow: Flow[_T]) -> _T: ...

    def _iterate(self, flow: Any) -> Iterator[Any]: ...

    def _sync_twin(self) -> BlockingClient: ...


class AwaitingClient(ClientCore, Protocol):
    """A client whose calls return coroutines to await (``AsyncClient``)."""

    def _run(self, flow: Flow[_T]) -> Coroutine[Any, Any, _T]: ...

    def _iterate(self, flow: Any) -> AsyncIterator[Any]: ...

    def _sync_twin(self) -> BlockingClient: ...


#: the blocking client a resource or a model belongs to
BlockingT = TypeVar("BlockingT", bound=BlockingClient)
#: the asyncio client a resource or a model belongs to
AwaitingT = TypeVar("AwaitingT", bound=AwaitingClient)


# =================================================================================================
# A call's ``timeout=``: one deadline for everything the call sends, retries included.
#
# ``within(flow, timeout)`` runs a flow unchanged except that every API request, download and
# upload it makes ends by ``timeout`` seconds from now (each attempt's timeout, the backoff
# between attempts and a ``Retry-After`` pause are all cut to the time left) and no pause of its
# own outlasts it. The request that meets the deadline raises :class:`APITimeoutError`; a submit's
# flow turns that into the lost-answer error that carries its idempotency key, as for any answer
# that never came. Written once, as a flow, so ``Client`` and ``AsyncClient`` share it.
# =================================================================================================


def earlier(deadline: float | None, other: float | None) -> float | None:
    """The sooner of two deadlines (None: none)."""
    if deadline is None:
        return other
    return deadline if other is None else min(deadline, other)


def within(flow: Flow[_T], timeout: float | None) -> Flow[_T]:
    """Flow: ``flow`` with a deadline ``timeout`` seconds from now (None: ``flow`` itself)."""
    if timeout is None:
        return (yield from flow)
    if timeout < 0:
        raise ValueError(f"timeout must be >= 0 seconds, not {timeout!r}")
    deadline = (yield Now()) + timeout
    steps = Steps(flow)
    for effect in steps:
        kind = type(effect)
        if kind is Call or kind is Fetch or kind is Put:
            effect = dataclasses.replace(effect, deadline=earlier(deadline, effect.deadline))
        elif kind is Sleep:
            left = deadline - (yield Now())
            effect = Sleep(max(0.0, min(effect.seconds, left)))
        try:
            steps.answer((yield effect))
        except BaseException as exc:  # the flow decides (a lost submit keeps its key)
            steps.fail(exc)
    return steps.result

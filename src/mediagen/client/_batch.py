"""Batch submit: the total price first, bounded concurrency, one result per item.

A notebook user submitting fifty variations wants to see what the lot costs before anything is
charged, and wants fifty answers back, not the first exception (or an ``ExceptionGroup`` they
have to pick apart). So a batch is two steps:

1. ``prepare`` (one flow, sequential): per request, find its kind (from the catalog entry),
   give it an idempotency key and quote it. The total is shown (``on_estimate``) and checked
   against ``max_credits`` and any active budget *before* a single submit is sent.
2. ``submit_item`` (one flow per item): the drivers run these with bounded concurrency
   (threads for ``Client``, tasks for ``AsyncClient``). The flow never raises: the item
   records its ``generation`` or its ``error``.

Each item keeps its idempotency key over its retries. Submitting the same batch again after
an item's answer was lost sends that item with the lost attempt's key (as a single submit
does), so it is charged once; keys the caller gave are always used as given.
"""

from __future__ import annotations

import contextvars
import dataclasses
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mediagen.client import _submit
from mediagen.client._budget import Budget, active_budgets, refuse_over
from mediagen.client._effects import ClientCore, Flow, Invoke
from mediagen.client._errors import LocalValidationError, MediagenError
from mediagen.client._models import ClientT, Estimate, Generation, ModelInfo

if TYPE_CHECKING:
    import asyncio

_T = TypeVar("_T")


class Executor:
    """The one way a blocking client runs many calls at once: a batch's submits, a table's
    rows and the saving of their outputs all go through one of these (``client.executor()``).

    At most ``concurrency`` calls run at a time, each on a worker thread in a copy of the
    caller's context, so ``with mediagen.budget(...)`` and the progress display hold there
    too. Leaving it normally waits for every call; leaving it on an error or on Ctrl-C
    cancels what has not started and waits for what has: a submit under way ends as every
    submit does (answered, or journaled unanswered and recoverable by its key), and nothing
    not yet sent is sent later.
    """

    def __init__(self, concurrency: int) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a whole number >= 1, not {concurrency!r}")
        self.concurrency = concurrency
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="mediagen")
        #: set when the executor is left on an error or Ctrl-C: a call that would try again
        #: later (a table's row held by the rate limit) stops instead of sending
        self.stopped = threading.Event()

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        """``fn(*args, **kwargs)`` on a worker thread, in a copy of this thread's context."""
        return self._pool.submit(contextvars.copy_context().run, fn, *args, **kwargs)

    def close(self, *, cancel: bool = False) -> None:
        """Wait for every call (``cancel=True``: only for those under way; the rest are
        cancelled)."""
        if cancel:
            self.stopped.set()
        self._pool.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close(cancel=kind is not None)

    def __repr__(self) -> str:
        return f"Executor(concurrency={self.concurrency})"


class AsyncExecutor:
    """The asyncio twin of :class:`Executor`, the one way an ``AsyncClient`` runs many calls
    at once: its batches and the compare grid's cells go through one of these
    (``aclient.executor()``).

    At most ``concurrency`` calls run at a time, each as a task of the running loop (a task
    runs in a copy of the caller's context, so ``with mediagen.budget(...)`` holds there).
    Leaving ``async with`` normally waits for every call; leaving it on an error or when the
    caller is cancelled cancels the calls still waiting for their turn and waits for those
    under way: a submit already sent ends as every submit does (answered, or journaled
    unanswered and recoverable by its key), and nothing not yet sent is sent later. The slots
    belong to the loop of the first call.
    """

    def __init__(self, concurrency: int) -> None:
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a whole number >= 1, not {concurrency!r}")
        self.concurrency = concurrency
        self._slots: asyncio.Semaphore | None = None
        self._waiting: set[asyncio.Task[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    def submit(
        self, fn: Callable[..., Awaitable[_T]], /, *args: Any, **kwargs: Any
    ) -> asyncio.Task[_T]:
        """A task of the running loop that awaits ``fn(*args, **kwargs)`` in its turn."""
        import asyncio

        if self._slots is None:
            self._slots = asyncio.Semaphore(self.concurrency)
        task = asyncio.get_running_loop().create_task(self._in_turn(fn, args, kwargs))
        self._waiting.add(task)
        self._tasks.add(task)
        task.add_done_callback(self._forget)
        return task

    async def _in_turn(self, fn: Callable[..., Awaitable[_T]], args: Any, kwargs: Any) -> _T:
        import asyncio

        assert self._slots is not None
        async with self._slots:
            task = asyncio.current_task()
            if task is not None:
                self._waiting.discard(task)
            return await fn(*args, **kwargs)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._waiting.discard(task)
        self._tasks.discard(task)

    async def aclose(self, *, cancel: bool = False) -> None:
        """Wait for every call (``cancel=True``: only for those under way; the calls still
        waiting for their turn are cancelled)."""
        import asyncio

        if cancel:
            for task in list(self._waiting):
                task.cancel()
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def __aenter__(self) -> AsyncExecutor:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose(cancel=kind is not None)

    def __repr__(self) -> str:
        return f"AsyncExecutor(concurrency={self.concurrency})"


@dataclasses.dataclass(eq=False)
class BatchItem(Generic[ClientT]):
    """One request of a batch and what became of it (``generation`` or ``error``; the
    generation acts through the client that ran the batch, as any generation does)."""

    index: int
    request: dict[str, Any]
    idempotency_key: str
    kind: str | None = None
    estimate: Estimate | None = None
    generation: Generation[ClientT] | None = None
    error: BaseException | None = None
    #: the caller gave the key; else the batch made it, and an identical request whose answer
    #: was lost may lend its own instead (see ``Journal.claim_or_append``)
    own_key: bool = False

    @property
    def ok(self) -> bool:
        """The item was submitted: it has a generation and no error."""
        return self.error is None and self.generation is not None

    def __repr__(self) -> str:
        outcome = (
            f"generation={self.generation.id!r}" if self.generation is not None else "not sent"
        )
        if self.error is not None:
            outcome = f"error={type(self.error).__name__}: {self.error}"
        return f"BatchItem({self.index}, model={self.request.get('model')!r}, {outcome})"


class BatchResult(list[BatchItem[ClientT]], Generic[ClientT]):
    """The items of a batch, in the order of the requests; ``total_estimate`` in credits."""

    def __init__(self, items: Iterable[BatchItem[ClientT]], total_estimate: float | None) -> None:
        super().__init__(items)
        self.total_estimate = total_estimate

    @property
    def generations(self) -> list[Generation[ClientT]]:
        """The generations that were submitted (failed items left out)."""
        return [item.generation for item in self if item.generation is not None]

    @property
    def errors(self) -> list[BatchItem[ClientT]]:
        """The items that were not submitted, each with its ``error``."""
        return [item for item in self if item.error is not None]

    def __repr__(self) -> str:
        ok = sum(1 for item in self if item.ok)
        total = "?" if self.total_estimate is None else f"{self.total_estimate:g}"
        return f"BatchResult({ok} submitted, {len(self) - ok} failed, estimate {total} credits)"


def describe(total: float, items: list[BatchItem[Any]]) -> str:
    priced = sum(1 for item in items if item.estimate is not None)
    refused = len(items) - priced
    text = f"Batch of {len(items)} request(s): estimated total {total:g} credits"
    if refused:
        text += f" ({refused} request(s) could not be priced and will not be sent)"
    return text


def _local_problems(
    client: ClientCore, entry: ModelInfo, request: dict[str, Any], kind: str
) -> list[dict]:
    """The catalog's local checks, minus reference fields: those are resolved (a path is
    uploaded, an output becomes its asset id) only when the item is submitted."""
    if not client._config.validate:
        return []
    references = {
        name
        for name, schema in (entry.catalog.entry.get("parameters") or {}).items()
        if isinstance(schema, dict) and schema.get("type") in ("asset", "asset_list", "keyframes")
    }
    return [
        p
        for p in entry.catalog.validate(request, kind=kind)
        if str(p["loc"][-1]).split("[")[0].split(".")[0] not in references
    ]


def prepare(
    client: ClientCore,
    requests: Iterable[Mapping[str, Any]],
    kind: str | None,
    on_estimate: Callable[[float, list[BatchItem[Any]]], Any] | None,
    max_credits: float | None,
) -> Flow[BatchResult[Any]]:
    """Flow: quote every request; refuse the whole batch (nothing sent) if it costs too much.

    ``on_estimate(total, items)`` is called with the total before anything is submitted; if
    it returns ``False`` nothing is sent and every item's error says so.
    """
    items: list[BatchItem[Any]] = []
    for index, raw in enumerate(requests):
        request = dict(raw)
        item_kind = request.pop("kind", None) or kind
        own = request.pop("idempotency_key", None)
        key = own or _submit.new_idempotency_key()
        item = BatchItem(index, request, key, item_kind, own_key=bool(own))
        items.append(item)
        try:
            item.estimate = yield from _quote_item(client, item)
        except (MediagenError, ValueError, TypeError) as exc:
            item.error = exc
    total = round(sum(i.estimate.credits_after_discount or 0.0 for i in items if i.estimate), 2)
    if on_estimate is not None:
        answer = yield Invoke(on_estimate, (total, items))
        if answer is False:
            cancelled = MediagenError("the batch was cancelled after its estimate; nothing sent")
            for item in items:
                item.error = item.error or cancelled
            return BatchResult(items, total)
    _refuse_over_limits(client, total, max_credits)
    return BatchResult(items, total)


def _quote_item(client: ClientCore, item: BatchItem[Any]) -> Flow[Estimate]:
    """Flow: one request checked (model, kind, fields) before its quote, so a mistake is named
    as the caller wrote it and costs no request to the estimate endpoint."""
    request = item.request
    model = request.get("model")
    if not isinstance(model, str) or not model:
        raise ValueError("a batch request needs a 'model'")
    entry = yield from _submit.get_model(client, model)
    item.kind = item.kind or entry.type
    if item.kind not in ("image", "video", "audio"):
        raise ValueError(f"cannot tell the kind of model {model!r}; pass kind=")
    _submit.check_fields(item.kind, request)
    problems = _local_problems(client, entry, request, item.kind)
    if problems:  # name the fields as the caller wrote them, before any quote
        raise LocalValidationError(
            f"invalid request for model {model!r} (nothing was sent)",
            code="validation_error",
            details=problems,
        )
    return (
        yield from _submit.estimate_for_request(
            client, {**request, "idempotency_key": item.idempotency_key}, entry
        )
    )


def _refuse_over_limits(client: ClientCore, total: float, max_credits: float | None) -> None:
    """Raise ``BudgetExceededError`` if the batch's total is over ``max_credits``, the client's
    budget or an active ``with budget(...)``: the whole batch is refused, nothing is sent."""
    refuse_over(total, (*_budgets(client), *active_budgets()), max_credits)


def _budgets(client: ClientCore) -> tuple[Budget, ...]:
    return (client._budget,) if client._budget is not None else ()


def runnable(items: Iterable[BatchItem[Any]]) -> list[BatchItem[Any]]:
    return [item for item in items if item.error is None]


def submit_item(client: ClientCore, item: BatchItem[Any]) -> Flow[BatchItem[Any]]:
    """Flow: submit one prepared item; never raises (the error is kept on the item)."""
    try:
        fields = dict(item.request)
        if item.own_key:
            fields["idempotency_key"] = item.idempotency_key
        item.generation = yield from _submit.submit(
            client,
            str(item.kind),
            fields,
            extra_body=None,
            extra_headers=None,
            validate=None,
            estimate=None,
            quote=item.estimate,
            fresh_key=item.idempotency_key,
        )
        item.idempotency_key = item.generation.idempotency_key or item.idempotency_key
    except Exception as exc:  # one result per item: the caller reads item.error
        item.error = exc
        item.idempotency_key = getattr(exc, "idempotency_key", None) or item.idempotency_key
    return item

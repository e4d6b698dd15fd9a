"""The resources (``client.videos``, ``.generations``, ``.models`` ...), blocking and asyncio
side by side over what they share.

Each operation is a flow (a generator of effects, see ``_effects``), written once here or in
``_submit`` / ``_wait``. The public classes (``Videos`` ... for ``Client``, ``AsyncVideos`` ...
for ``AsyncClient``) only hand a flow to ``client._run`` (one result) or ``client._iterate``
(many), so each states its real return type (a value, or an awaitable of it) and
``client.images.create(...)`` and ``await aclient.images.create(...)`` share every line of
logic. The asyncio classes are the source of the blocking ones: ``scripts/unasync.py`` writes
those (signatures, defaults and docstrings stated once).
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as dt
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sized
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mediagen.client import _hooks, _requests, _submit, _wait
from mediagen.client._config import normalize_poll_interval
from mediagen.client._effects import (
    AwaitingClient,
    AwaitingT,
    BlockingClient,
    BlockingT,
    Call,
    ClientCore,
    Emit,
    Flow,
    within,
)
from mediagen.client._errors import NotFoundError, SubmitInterrupted, WaitInterrupted
from mediagen.client._models import (
    Asset,
    Credits,
    Estimate,
    Generation,
    ModelInfo,
    UploadTicket,
    parse_datetime,
)
from mediagen.client._submit import estimate_for_request, get_model, read_credits, submit
from mediagen.display._html import plural
from mediagen.wire import _names as _wire

if TYPE_CHECKING:
    import pandas as pd


# =================================================================================================
# What the blocking and the asyncio resources share: the flows of reading, listing, recovering
# and resuming generations, and the base classes the twins below subclass.
# =================================================================================================

_G = TypeVar("_G")


class _Resource:
    def __init__(self, client: ClientCore) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._client!r}>"


# --- submit -------------------------------------------------------------------------------


class _Create(_Resource):
    """``POST /v1/{videos,images,audio}``: the public ``create`` of each driver runs
    :meth:`_submit`."""

    _kind = ""

    def _submit(
        self,
        extra_body: Mapping[str, Any] | None,
        extra_headers: Mapping[str, str] | None,
        validate: bool | None,
        estimate: bool | None,
        fields: dict[str, Any],
    ) -> Flow[Generation[Any]]:
        return submit(
            self._client,
            self._kind,
            fields,
            extra_body=extra_body,
            extra_headers=extra_headers,
            validate=validate,
            estimate=estimate,
        )


# --- generations --------------------------------------------------------------------------


def _get(client: ClientCore, generation_id: str) -> Flow[Generation[Any]]:
    data = yield Call(_requests.get_generation(generation_id))
    return Generation.from_dict(data, client=client)


def _page(client: ClientCore, query: Mapping[str, Any]) -> Flow[Any]:
    return (yield Call(_requests.list_generations(**query)))


def _list(client: ClientCore, query: dict[str, Any], max_items: int | None) -> Flow[None]:
    seen = 0
    while True:
        page = yield Call(_requests.list_generations(**query))
        for item in _requests.page_items(page):
            yield Emit(Generation.from_dict(item, client=client))
            seen += 1
            if max_items is not None and seen >= max_items:
                return
        cursor = _requests.page_next_cursor(page)
        if cursor is None:
            return
        query = {**query, "after": cursor}


def _fetch_many(client: ClientCore, ids: Iterable[str]) -> Flow[list[Generation[Any]]]:
    out = []
    for gid in ids:
        try:
            out.append((yield from _get(client, gid)))
        except NotFoundError:
            continue
    return out


#: how far before a lost attempt (by this machine's clock) its job is looked for
RECOVER_CLOCK_SLACK = dt.timedelta(minutes=15)
#: a lost attempt not found this long after it was sent never reached the service
RECOVER_SETTLED = dt.timedelta(hours=1)


def _recover(client: ClientCore) -> Flow[list[Generation[Any]]]:
    """Flow: find, by idempotency key, the jobs of submits whose answer was lost (read only)."""
    lost = {r["idempotency_key"]: r for r in client._journal_unanswered()}
    if not lost:
        return []
    times = [parse_datetime(r.get("at")) for r in lost.values()]
    known = [t for t in times if t is not None]
    since = min(known) - RECOVER_CLOCK_SLACK if len(known) == len(times) else None
    found: list[Generation[Any]] = []
    query: dict[str, Any] = {"limit": _wire.PAGE_SIZE_MAX, "created_after": since}
    while lost:
        page = yield Call(_requests.list_generations(**query))
        for item in _requests.page_items(page):
            record = (
                lost.pop(item.get("idempotency_key") or "", None)
                if isinstance(item, dict)
                else None
            )
            if record is None:
                continue
            gen = Generation.from_dict(item, client=client)
            client._journal_event("submitted", record.get("kind"), record.get("request"),
                                  gen.idempotency_key, gen, None)  # fmt: skip
            found.append(gen)
        cursor = _requests.page_next_cursor(page)
        if cursor is None:
            break
        query["after"] = cursor
    # Not at the service although everything since was listed: it never arrived. Once that is
    # surely not a slow commit, say so in the journal, so it is not looked for again.
    settled = dt.datetime.now(dt.timezone.utc) - RECOVER_SETTLED
    for key, record in lost.items():
        at = parse_datetime(record.get("at"))
        if at is not None and at < settled:
            client._journal_event("absent", record.get("kind"), None, key, None, None)
    return found


def _resend(client: ClientCore, key: str) -> Flow[Generation[Any]]:
    """Flow: the submit journaled under ``key`` whose answer was lost, sent again with that
    key and the body sent then (its uploads are at the service already): the service answers
    with the job it made, or makes it now. Charged at most once, whoever made the key."""
    found = [r for r in client._journal_unanswered() if r.get("idempotency_key") == key]
    if not found:
        where = "the journal is off" if client.journal is None else f"see {client.journal.path}"
        raise LookupError(
            f"no submit with idempotency key {key!r} is waiting for its answer ({where}); "
            "client.generations.pending() lists those that are"
        )
    record = found[0]
    fields = {**(record.get("request") or {}), "idempotency_key": key}
    return (
        yield from submit(
            client, str(record.get("kind")), fields,
            extra_body=None, extra_headers=None, validate=False, estimate=None,
        )
    )  # fmt: skip


def _resume(client: ClientCore, wait: bool, download: bool) -> Flow[list[Generation[Any]]]:
    recovered = yield from _recover(client)
    ids = [r["generation_id"] for r in client._journal_pending()]
    ids += [g.id for g in recovered if g.id not in ids]  # even if it finished meanwhile
    gens = yield from _fetch_many(client, ids)
    out = []
    for gen in gens:
        if gen.done:
            gen = yield from _wait.finish(client, gen, download)
        elif wait:
            gen = yield from _wait.wait(
                client,
                gen,
                timeout=None,
                on_update=None,
                poll_interval=client._config.poll_interval,
                download=download,
            )
        out.append(gen)
    return out


def _short_interrupts(items: Iterable[_G]) -> Iterator[_G]:
    """``items``, with an interruption raised from here: its message says what is left, the
    frames of the flow and driver would not help."""
    __tracebackhide__ = True
    try:
        yield from items
    except WaitInterrupted as exc:
        raise exc.with_traceback(None) from None


# --- generations --------------------------------------------------------------------------


class _GenerationsBase(_Resource):
    """``GET /v1/generations[/{id}]`` plus waiting, watching and resuming."""

    #: either client: the history's table is read through its blocking twin
    _client: BlockingClient | AwaitingClient

    def _get(self, generation_id: str) -> Flow[Generation[Any]]:
        return _get(self._client, _wait.generation_id(generation_id))

    def _list_query(self, **query: Any) -> dict[str, Any]:
        query["limit"] = query.get("limit") or _wire.PAGE_SIZE_MAX
        return {k: v for k, v in query.items() if v is not None}

    def _poll_interval(self, poll_interval: Any) -> tuple[float, float]:
        if poll_interval is None:
            return self._client._config.poll_interval
        return normalize_poll_interval(poll_interval)

    def _download(self, download: bool | None) -> bool:
        return self._client._config.download if download is None else download

    @contextlib.contextmanager
    def _waiting(
        self, generation: Any, callback: Callable[[Generation[Any]], Any] | None
    ) -> Iterator[Callable[[Generation[Any]], Any] | None]:
        """The callback of a wait: the caller's, else a progress display's (if one is
        installed) for as long as the wait runs."""
        if callback is not None:
            yield callback
            return
        gid = _wait.generation_id(generation)
        about = (self._client, generation)
        with _hooks.progress(f"Waiting for generation {gid}", about=about) as bar:
            if bar is None:
                yield None
            else:
                yield lambda g: bar.update(message=_hooks.generation_status(g))

    @staticmethod
    def _interrupted(exc: KeyboardInterrupt, generation: Any) -> WaitInterrupted:
        """What an interrupted wait raises (from the public method, so the traceback is the
        caller's line and that method): the job, that it keeps running, how to resume."""
        if isinstance(exc, WaitInterrupted):
            return exc.with_traceback(None)
        return WaitInterrupted(_wait.generation_id(generation)).with_traceback(None)

    def _wait(
        self,
        generation: Any,
        timeout: float | None,
        callback: Callable[[Generation[Any]], Any] | None,
        poll_interval: Any,
        download: bool | None,
    ) -> Flow[Generation[Any]]:
        return _wait.wait(
            self._client,
            generation,
            timeout=timeout,
            on_update=callback,
            poll_interval=self._poll_interval(poll_interval),
            download=self._download(download),
        )

    def _watch(
        self,
        generations: Iterable[Any],
        timeout: float | None,
        on_update: Callable[[Generation[Any]], Any] | None,
        poll_interval: Any,
        download: bool | None,
    ) -> Flow[None]:
        return _wait.watch(
            self._client,
            builtins.list(generations),
            timeout=timeout,
            on_update=on_update,
            poll_interval=self._poll_interval(poll_interval),
            download=self._download(download),
        )

    def _recover(self) -> Flow[builtins.list[Generation[Any]]]:
        return _recover(self._client)

    def _resume(self, wait: bool, download: bool | None) -> Flow[builtins.list[Generation[Any]]]:
        return _resume(self._client, wait, self._download(download))

    def _resend(self, idempotency_key: str) -> Flow[Generation[Any]]:
        return _resend(self._client, idempotency_key)

    def pending(self) -> builtins.list[dict[str, Any]]:
        """Journal records of generations this machine submitted that were last seen pending,
        then submits whose answer was lost (``event`` ``"unanswered"``, no ``generation_id``
        yet: :meth:`recover` looks them up)."""
        return self._client._journal_pending() + self._client._journal_unanswered()

    def to_dataframe(
        self,
        *,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
        sync: bool = True,
        rebuild: bool = False,
        store: bool = True,
    ) -> pd.DataFrame:
        """All matching generations as a pandas DataFrame, newest first (``mediagen.history``).

        The filters are the list endpoint's: ``status``, ``type``, ``model`` and
        ``created_after`` (an aware datetime, a date or an ISO string; strictly after).

        By default the rows come from the local history store (``mediagen.history.HistoryStore``,
        under the client's cache folder): a sync first fetches only what was created since the
        last one, plus what was still pending. ``sync=False`` answers from the store without
        asking the service (offline); ``rebuild=True`` forgets the store and fetches everything
        again; ``store=False`` fetches the matching generations directly and keeps nothing.
        It blocks, on either client (history reads run on the blocking twin).
        """
        build = _hooks.history_builder()
        filters = {"status": status, "type": type, "model": model, "created_after": created_after}
        with _hooks.progress("Fetching history", "page") as bar:
            on_page = None
            if bar is not None:
                rows = [0]

                def on_page(page: Sized) -> None:
                    rows[0] += len(page)
                    bar.advance(message=plural(rows[0], "generation"))

            client = self._client._sync_twin()
            frame: pd.DataFrame = build(
                client, store=store, sync=sync, rebuild=rebuild, on_page=on_page, **filters
            )
            return frame


class _GenerationListBase:
    """Every generation matching the filters, following cursors (iterate it)."""

    def __init__(
        self,
        resource: _GenerationsBase,
        query: dict[str, Any],
        max_items: int | None,
        timeout: float | None = None,
    ):
        self._resource = resource
        self._query = query
        self._max_items = max_items
        self._timeout = timeout

    def _flow(self) -> Flow[None]:
        listing = _list(self._resource._client, dict(self._query), self._max_items)
        return within(listing, self._timeout)

    def to_dataframe(self, **options: Any) -> pd.DataFrame:
        """This list's generations as a DataFrame (the columns of
        ``client.generations.to_dataframe()``)."""
        filters = {k: v for k, v in self._query.items() if k not in ("limit", "after")}
        return self._resource.to_dataframe(**filters, **options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._query!r})"


# --- models, credits, uploads -------------------------------------------------------------


def _list_models(client: ClientCore, type: str | None) -> Flow[list[ModelInfo]]:
    data = yield Call(_requests.list_models(type))
    models = [ModelInfo.from_dict(m) for m in _requests.page_items(data or {})]
    for info in models:
        client._models_cache[info.id] = info
    return models


def _estimate(client: ClientCore, model_id: str, query: Mapping[str, Any]) -> Flow[Estimate]:
    return Estimate.from_dict((yield Call(_requests.estimate(model_id, query))))


def _total_estimate(client: ClientCore, requests: list[Mapping[str, Any]]) -> Flow[list[Estimate]]:
    quotes: list[Estimate] = []
    for request in requests:
        quotes.append((yield from estimate_for_request(client, request, None)))
    return quotes


class _ModelsBase(_Resource):
    """The catalog: ``GET /v1/models``, ``/v1/models/{id}`` and the estimate endpoint."""

    def _list(self, type: str | None) -> Flow[list[ModelInfo]]:
        return _list_models(self._client, type)

    def _get(self, model_id: str, refresh: bool) -> Flow[ModelInfo]:
        return get_model(self._client, model_id, refresh)

    def _estimate(self, model_id: str, query: Mapping[str, Any]) -> Flow[Estimate]:
        return _estimate(self._client, model_id, query)

    def _estimate_request(self, request: Mapping[str, Any]) -> Flow[Estimate]:
        return estimate_for_request(self._client, dict(request), None)

    def _estimate_many(self, requests: Iterable[Mapping[str, Any]]) -> Flow[list[Estimate]]:
        return _total_estimate(self._client, [dict(r) for r in requests])


class _UploadsBase(_Resource):
    """``POST /v1/uploads`` then a streamed PUT of the bytes to the signed URL."""

    def _register(self, filename: str, content_type: str, size_bytes: int) -> Flow[UploadTicket]:
        return _submit.register(self._client, filename, content_type, size_bytes)

    def _upload(
        self,
        source: Any,
        filename: str | None,
        content_type: str | None,
        ticket: UploadTicket | None,
    ) -> Flow[Asset]:
        made = _submit.make_source(source, filename, content_type)
        return _submit.upload(self._client, made, ticket)


# =================================================================================================
# The resources of ``AsyncClient``: each method hands one shared flow to ``aclient._run`` and
# awaits it. The source of the blocking twins below.
# =================================================================================================


class _AsyncCreate(_Create, Generic[AwaitingT]):
    _client: AwaitingT

    async def create(
        self,
        *,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        validate: bool | None = None,
        estimate: bool | None = None,
        timeout: float | None = None,
        **fields: Any,
    ) -> Generation[AwaitingT]:
        """Submit a generation; returns it ``pending`` (``.wait()`` for the result).

        Fields are the spec's body fields as keyword arguments; an unknown one raises
        :class:`UnknownFieldError` (send it anyway with ``extra_body={...}``). Reference
        inputs take an asset id, an ``Asset``, a ``GenerationOutput`` or a local path
        (uploaded first). The request is checked against the model's catalog entry before
        sending (``validate=False`` skips that). An ``idempotency_key`` is made when none is
        given, and reused on every retry, so a retry can never charge twice. ``timeout``
        (s; default: the client's, per request) is a deadline for the whole submit; when it
        passes after the request went out, the error carries the idempotency key, as for any
        answer that never came, so sending again cannot charge twice.
        """
        __tracebackhide__ = True  # IPython and pytest show the caller's line, not ours
        flow = within(self._submit(extra_body, extra_headers, validate, estimate, fields), timeout)
        try:
            return await self._client._run(flow)
        except SubmitInterrupted as exc:  # the message says all; the flow's frames do not help
            raise exc.with_traceback(None) from None


class AsyncVideos(_AsyncCreate[AwaitingT]):
    """``POST /v1/videos``."""

    _kind = "video"


class AsyncImages(_AsyncCreate[AwaitingT]):
    """``POST /v1/images``."""

    _kind = "image"


class AsyncAudio(_AsyncCreate[AwaitingT]):
    """``POST /v1/audio`` (speech or music: the model decides)."""

    _kind = "audio"


class AsyncGenerationList(_GenerationListBase, Generic[AwaitingT]):
    """Every generation matching the filters, following cursors (``async for g in ...``)."""

    _resource: AsyncGenerations[AwaitingT]

    def __aiter__(self) -> AsyncIterator[Generation[AwaitingT]]:
        return self._resource._client._iterate(self._flow())


class AsyncGenerations(_GenerationsBase, Generic[AwaitingT]):
    """``GET /v1/generations[/{id}]`` plus waiting, watching and resuming."""

    _client: AwaitingT

    async def get(
        self, generation_id: str, *, timeout: float | None = None
    ) -> Generation[AwaitingT]:
        """One generation's current state."""
        return await self._client._run(within(self._get(generation_id), timeout))

    def list(
        self,
        *,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
        limit: int | None = None,
        max_items: int | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerationList[AwaitingT]:
        """Iterate every matching generation, newest first (cursors followed for you).

        ``limit`` is the page size (default 100, the maximum); ``max_items`` stops early.
        ``timeout`` (s) is one deadline for the whole listing, every page and retry included,
        counted from the first page's request.
        """
        query = self._list_query(
            status=status, type=type, model=model, created_after=created_after, limit=limit
        )
        return AsyncGenerationList(self, query, max_items, timeout)

    async def _list_page_raw(
        self,
        *,
        limit: int | None = None,
        after: str | None = None,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
        decode: Callable[[bytes], Any] | None = None,
    ) -> Any:
        """One page of ``GET /v1/generations``: its JSON, or what ``decode`` reads from its body
        (thread-safe)."""
        query = {
            "limit": limit,
            "after": after,
            "status": status,
            "type": type,
            "model": model,
            "created_after": created_after,
            "decode": decode,
        }
        return await self._client._run(_page(self._client, query))

    async def wait(
        self,
        generation: Any,
        timeout: float | None = None,
        *,
        on_update: Callable[[Generation[AwaitingT]], Any] | None = None,
        progress: Callable[[Generation[AwaitingT]], Any] | None = None,
        poll_interval: Any = None,
        download: bool | None = None,
    ) -> Generation[AwaitingT]:
        """Poll until ``completed`` or ``failed`` and return the final Generation.

        Polls every ``poll_interval`` (client default 2 s backing off to 5 s); calls
        ``on_update(generation)`` (alias ``progress``) after each poll. Raises
        :class:`WaitTimeoutError` after ``timeout`` seconds (the job may still complete and
        be charged; nothing is resubmitted). Completed outputs are downloaded into the cache
        (``download=False`` skips that). A failed generation is returned, not raised: call
        ``.raise_for_error()``.
        """
        __tracebackhide__ = True  # IPython and pytest show the caller's line, not ours
        try:
            with self._waiting(generation, on_update or progress) as callback:
                flow = self._wait(generation, timeout, callback, poll_interval, download)
                return await self._client._run(flow)
        except KeyboardInterrupt as exc:
            raise self._interrupted(exc, generation) from None

    def watch(
        self,
        generations: Iterable[Any],
        *,
        timeout: float | None = None,
        on_update: Callable[[Generation[AwaitingT]], Any] | None = None,
        poll_interval: Any = None,
        download: bool | None = None,
    ) -> AsyncIterator[Generation[AwaitingT]]:
        """Yield each generation as it finishes (completion order).

        Costs requests per page of the list endpoint (100 generations a page) per round, not
        one request per job.
        """
        flow = self._watch(generations, timeout, on_update, poll_interval, download)
        return self._client._iterate(flow)

    async def recover(
        self, *, timeout: float | None = None
    ) -> builtins.list[Generation[AwaitingT]]:
        """Find the jobs of submits whose answer never arrived (a dropped connection, a 5xx,
        an interrupt, a crash), by their idempotency keys; read only, nothing is submitted.

        Returns the generations found (journaled, so ``pending()``/``resume()`` know them). A
        lost submit not found here never reached the service; sending the same request again
        reuses its idempotency key, so it is charged at most once either way. ``timeout`` (s)
        is a deadline for the whole call, every lookup and retry included.
        """
        return await self._client._run(within(self._recover(), timeout))

    async def resume(
        self, *, wait: bool = False, download: bool | None = None, timeout: float | None = None
    ) -> builtins.list[Generation[AwaitingT]]:
        """Re-attach after a kernel restart: the current state of every journaled pending job,
        including those of submits whose answer was lost (:meth:`recover` runs first).

        Finished ones are journaled (and downloaded); ``wait=True`` also waits for the rest.
        ``timeout`` (s) is a deadline for the whole call, the waiting included.
        """
        return await self._client._run(within(self._resume(wait, download), timeout))

    async def resend(
        self, idempotency_key: str, *, timeout: float | None = None
    ) -> Generation[AwaitingT]:
        """Send again the submit whose answer was lost under ``idempotency_key`` (it is in
        :meth:`pending`), with that key and the body sent then: the service answers with the
        job it made, or makes it now, so it is charged at most once. Works for a key the
        caller brought as for one the client made, after a kernel restart too (the journal
        keeps the attempt); ``LookupError`` when no such submit waits for its answer."""
        return await self._client._run(within(self._resend(idempotency_key), timeout))


class AsyncModels(_ModelsBase):
    """The catalog: ``GET /v1/models``, ``/v1/models/{id}`` and the estimate endpoint."""

    _client: AwaitingClient

    async def list(
        self, *, type: str | None = None, timeout: float | None = None
    ) -> builtins.list[ModelInfo]:
        """Every model (of ``type``: ``image``, ``video`` or ``audio``) as ``ModelInfo``."""
        return await self._client._run(within(self._list(type), timeout))

    async def get(
        self, model_id: str, *, refresh: bool = False, timeout: float | None = None
    ) -> ModelInfo:
        """One catalog entry (cached per client; ``refresh=True`` reads it again)."""
        return await self._client._run(within(self._get(model_id, refresh), timeout))

    async def estimate(
        self, model_id: str, *, timeout: float | None = None, **query: Any
    ) -> Estimate:
        """``GET /v1/models/{id}/estimate`` with the wire contract's query names."""
        return await self._client._run(within(self._estimate(model_id, query), timeout))

    async def estimate_request(
        self, request: Mapping[str, Any], *, timeout: float | None = None
    ) -> Estimate:
        """The quote for exactly this submit body (mapped with ``Catalog.estimate_query``)."""
        return await self._client._run(within(self._estimate_request(request), timeout))

    async def estimate_many(
        self, requests: Iterable[Mapping[str, Any]], *, timeout: float | None = None
    ) -> builtins.list[Estimate]:
        """One quote per request (for showing a batch's total before submitting it);
        ``timeout`` (s) is one deadline for all of them."""
        return await self._client._run(within(self._estimate_many(requests), timeout))


class AsyncCreditsResource(_Resource):
    """``GET /v1/credits``."""

    _client: AwaitingClient

    async def get(self, *, timeout: float | None = None) -> Credits:
        """The balance, the member cap and the plan; ``timeout`` (s) is a deadline for the
        call, retries and their pauses included (default: the client's ``timeout``)."""
        return await self._client._run(within(read_credits(self._client), timeout))


class AsyncUploads(_UploadsBase):
    """``POST /v1/uploads`` then a streamed PUT of the bytes to the signed URL."""

    _client: AwaitingClient

    async def create(
        self, *, filename: str, content_type: str, size_bytes: int, timeout: float | None = None
    ) -> UploadTicket:
        """Register a file; returns the ``UploadTicket`` (``upload_url``, headers, expiry)."""
        return await self._client._run(
            within(self._register(filename, content_type, size_bytes), timeout)
        )

    async def upload(
        self,
        source: Any,
        *,
        filename: str | None = None,
        content_type: str | None = None,
        ticket: UploadTicket | None = None,
        timeout: float | None = None,
    ) -> Asset:
        """Upload a path, bytes or binary file object; returns the ready ``Asset``.

        Streams in 1 MiB chunks with exactly the ticket's ``required_headers`` (never the API
        key); an expired ticket is registered again. ``timeout`` (s) is one deadline for the
        registration, the bytes and every retry.
        """
        return await self._client._run(
            within(self._upload(source, filename, content_type, ticket), timeout)
        )


# =================================================================================================
# The resources of the blocking ``Client``, written from the asyncio ones above by
# ``scripts/unasync.py``: edit those and run it (a test fails when the two differ).
# =================================================================================================


class _SyncCreate(_Create, Generic[BlockingT]):
    _client: BlockingT

    def create(
        self,
        *,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        validate: bool | None = None,
        estimate: bool | None = None,
        timeout: float | None = None,
        **fields: Any,
    ) -> Generation[BlockingT]:
        """Submit a generation; returns it ``pending`` (``.wait()`` for the result).

        Fields are the spec's body fields as keyword arguments; an unknown one raises
        :class:`UnknownFieldError` (send it anyway with ``extra_body={...}``). Reference
        inputs take an asset id, an ``Asset``, a ``GenerationOutput`` or a local path
        (uploaded first). The request is checked against the model's catalog entry before
        sending (``validate=False`` skips that). An ``idempotency_key`` is made when none is
        given, and reused on every retry, so a retry can never charge twice. ``timeout``
        (s; default: the client's, per request) is a deadline for the whole submit; when it
        passes after the request went out, the error carries the idempotency key, as for any
        answer that never came, so sending again cannot charge twice.
        """
        __tracebackhide__ = True  # IPython and pytest show the caller's line, not ours
        flow = within(self._submit(extra_body, extra_headers, validate, estimate, fields), timeout)
        try:
            return self._client._run(flow)
        except SubmitInterrupted as exc:  # the message says all; the flow's frames do not help
            raise exc.with_traceback(None) from None


class Videos(_SyncCreate[BlockingT]):
    """``POST /v1/videos``."""

    _kind = "video"


class Images(_SyncCreate[BlockingT]):
    """``POST /v1/images``."""

    _kind = "image"


class Audio(_SyncCreate[BlockingT]):
    """``POST /v1/audio`` (speech or music: the model decides)."""

    _kind = "audio"


class GenerationList(_GenerationListBase, Generic[BlockingT]):
    """Every generation matching the filters, following cursors (``for g in ...``)."""

    _resource: Generations[BlockingT]

    def __iter__(self) -> Iterator[Generation[BlockingT]]:
        return self._resource._client._iterate(self._flow())


class Generations(_GenerationsBase, Generic[BlockingT]):
    """``GET /v1/generations[/{id}]`` plus waiting, watching and resuming."""

    _client: BlockingT

    def get(self, generation_id: str, *, timeout: float | None = None) -> Generation[BlockingT]:
        """One generation's current state."""
        return self._client._run(within(self._get(generation_id), timeout))

    def list(
        self,
        *,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
        limit: int | None = None,
        max_items: int | None = None,
        timeout: float | None = None,
    ) -> GenerationList[BlockingT]:
        """Iterate every matching generation, newest first (cursors followed for you).

        ``limit`` is the page size (default 100, the maximum); ``max_items`` stops early.
        ``timeout`` (s) is one deadline for the whole listing, every page and retry included,
        counted from the first page's request.
        """
        query = self._list_query(
            status=status, type=type, model=model, created_after=created_after, limit=limit
        )
        return GenerationList(self, query, max_items, timeout)

    def _list_page_raw(
        self,
        *,
        limit: int | None = None,
        after: str | None = None,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
        decode: Callable[[bytes], Any] | None = None,
    ) -> Any:
        """One page of ``GET /v1/generations``: its JSON, or what ``decode`` reads from its body
        (thread-safe)."""
        query = {
            "limit": limit,
            "after": after,
            "status": status,
            "type": type,
            "model": model,
            "created_after": created_after,
            "decode": decode,
        }
        return self._client._run(_page(self._client, query))

    def wait(
        self,
        generation: Any,
        timeout: float | None = None,
        *,
        on_update: Callable[[Generation[BlockingT]], Any] | None = None,
        progress: Callable[[Generation[BlockingT]], Any] | None = None,
        poll_interval: Any = None,
        download: bool | None = None,
    ) -> Generation[BlockingT]:
        """Poll until ``completed`` or ``failed`` and return the final Generation.

        Polls every ``poll_interval`` (client default 2 s backing off to 5 s); calls
        ``on_update(generation)`` (alias ``progress``) after each poll. Raises
        :class:`WaitTimeoutError` after ``timeout`` seconds (the job may still complete and
        be charged; nothing is resubmitted). Completed outputs are downloaded into the cache
        (``download=False`` skips that). A failed generation is returned, not raised: call
        ``.raise_for_error()``.
        """
        __tracebackhide__ = True  # IPython and pytest show the caller's line, not ours
        try:
            with self._waiting(generation, on_update or progress) as callback:
                flow = self._wait(generation, timeout, callback, poll_interval, download)
                return self._client._run(flow)
        except KeyboardInterrupt as exc:
            raise self._interrupted(exc, generation) from None

    def watch(
        self,
        generations: Iterable[Any],
        *,
        timeout: float | None = None,
        on_update: Callable[[Generation[BlockingT]], Any] | None = None,
        poll_interval: Any = None,
        download: bool | None = None,
    ) -> Iterator[Generation[BlockingT]]:
        """Yield each generation as it finishes (completion order).

        Costs requests per page of the list endpoint (100 generations a page) per round, not
        one request per job.
        """
        flow = self._watch(generations, timeout, on_update, poll_interval, download)
        return self._client._iterate(flow)

    def recover(self, *, timeout: float | None = None) -> builtins.list[Generation[BlockingT]]:
        """Find the jobs of submits whose answer never arrived (a dropped connection, a 5xx,
        an interrupt, a crash), by their idempotency keys; read only, nothing is submitted.

        Returns the generations found (journaled, so ``pending()``/``resume()`` know them). A
        lost submit not found here never reached the service; sending the same request again
        reuses its idempotency key, so it is charged at most once either way. ``timeout`` (s)
        is a deadline for the whole call, every lookup and retry included.
        """
        return self._client._run(within(self._recover(), timeout))

    def resume(
        self, *, wait: bool = False, download: bool | None = None, timeout: float | None = None
    ) -> builtins.list[Generation[BlockingT]]:
        """Re-attach after a kernel restart: the current state of every journaled pending job,
        including those of submits whose answer was lost (:meth:`recover` runs first).

        Finished ones are journaled (and downloaded); ``wait=True`` also waits for the rest.
        ``timeout`` (s) is a deadline for the whole call, the waiting included.
        """
        return self._client._run(within(self._resume(wait, download), timeout))

    def resend(
        self, idempotency_key: str, *, timeout: float | None = None
    ) -> Generation[BlockingT]:
        """Send again the submit whose answer was lost under ``idempotency_key`` (it is in
        :meth:`pending`), with that key and the body sent then: the service answers with the
        job it made, or makes it now, so it is charged at most once. Works for a key the
        caller brought as for one the client made, after a kernel restart too (the journal
        keeps the attempt); ``LookupError`` when no such submit waits for its answer."""
        return self._client._run(within(self._resend(idempotency_key), timeout))


class Models(_ModelsBase):
    """The catalog: ``GET /v1/models``, ``/v1/models/{id}`` and the estimate endpoint."""

    _client: BlockingClient

    def list(
        self, *, type: str | None = None, timeout: float | None = None
    ) -> builtins.list[ModelInfo]:
        """Every model (of ``type``: ``image``, ``video`` or ``audio``) as ``ModelInfo``."""
        return self._client._run(within(self._list(type), timeout))

    def get(
        self, model_id: str, *, refresh: bool = False, timeout: float | None = None
    ) -> ModelInfo:
        """One catalog entry (cached per client; ``refresh=True`` reads it again)."""
        return self._client._run(within(self._get(model_id, refresh), timeout))

    def estimate(self, model_id: str, *, timeout: float | None = None, **query: Any) -> Estimate:
        """``GET /v1/models/{id}/estimate`` with the wire contract's query names."""
        return self._client._run(within(self._estimate(model_id, query), timeout))

    def estimate_request(
        self, request: Mapping[str, Any], *, timeout: float | None = None
    ) -> Estimate:
        """The quote for exactly this submit body (mapped with ``Catalog.estimate_query``)."""
        return self._client._run(within(self._estimate_request(request), timeout))

    def estimate_many(
        self, requests: Iterable[Mapping[str, Any]], *, timeout: float | None = None
    ) -> builtins.list[Estimate]:
        """One quote per request (for showing a batch's total before submitting it);
        ``timeout`` (s) is one deadline for all of them."""
        return self._client._run(within(self._estimate_many(requests), timeout))


class CreditsResource(_Resource):
    """``GET /v1/credits``."""

    _client: BlockingClient

    def get(self, *, timeout: float | None = None) -> Credits:
        """The balance, the member cap and the plan; ``timeout`` (s) is a deadline for the
        call, retries and their pauses included (default: the client's ``timeout``)."""
        return self._client._run(within(read_credits(self._client), timeout))


class Uploads(_UploadsBase):
    """``POST /v1/uploads`` then a streamed PUT of the bytes to the signed URL."""

    _client: BlockingClient

    def create(
        self, *, filename: str, content_type: str, size_bytes: int, timeout: float | None = None
    ) -> UploadTicket:
        """Register a file; returns the ``UploadTicket`` (``upload_url``, headers, expiry)."""
        return self._client._run(
            within(self._register(filename, content_type, size_bytes), timeout)
        )

    def upload(
        self,
        source: Any,
        *,
        filename: str | None = None,
        content_type: str | None = None,
        ticket: UploadTicket | None = None,
        timeout: float | None = None,
    ) -> Asset:
        """Upload a path, bytes or binary file object; returns the ready ``Asset``.

        Streams in 1 MiB chunks with exactly the ticket's ``required_headers`` (never the API
        key); an expired ticket is registered again. ``timeout`` (s) is one deadline for the
        registration, the bytes and every retry.
        """
        return self._client._run(
            within(self._upload(source, filename, content_type, ticket), timeout)
        )

"""The resources of the blocking ``Client``: each method runs a shared flow and returns its
value (the logic lives in ``_resources``, once for both clients)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic

from mediagen.client._deadline import within
from mediagen.client._errors import SubmitInterrupted
from mediagen.client._models import (
    Asset,
    Credits,
    Estimate,
    Generation,
    ModelInfo,
    UploadTicket,
)
from mediagen.client._resources import (
    _Create,
    _GenerationListBase,
    _GenerationsBase,
    _ModelsBase,
    _page,
    _Resource,
    _short_interrupts,
    _UploadsBase,
)
from mediagen.client._runners import BlockingClient, BlockingT
from mediagen.client._submit import read_credits


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
        return iter(self._resource._client._iterate(self._flow()))


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
        return _short_interrupts(self._client._iterate(flow))

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

"""The resources of ``AsyncClient``: the same shared flows as ``Client``'s, awaited (see the
blocking twins in ``_sync_resources`` for what each method does)."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
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
    _Resource,
    _UploadsBase,
)
from mediagen.client._runners import AwaitingClient, AwaitingT
from mediagen.client._submit import read_credits


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
        """Submit a generation; returns it ``pending`` (as ``Client``'s ``create``)."""
        __tracebackhide__ = True
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
        """The generation ``generation_id`` as it is now (``GET /v1/generations/{id}``)."""
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
        """``async for g in aclient.generations.list(...)``, newest first."""
        query = self._list_query(
            status=status, type=type, model=model, created_after=created_after, limit=limit
        )
        return AsyncGenerationList(self, query, max_items, timeout)

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
        """Poll until ``completed`` or ``failed`` and return the final Generation."""
        __tracebackhide__ = True
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
        """``async for g in aclient.generations.watch(gens)``: each as it finishes."""
        flow = self._watch(generations, timeout, on_update, poll_interval, download)
        return self._client._iterate(flow)

    async def recover(
        self, *, timeout: float | None = None
    ) -> builtins.list[Generation[AwaitingT]]:
        """Find the jobs of submits whose answer never arrived, by their idempotency keys; nothing
        is submitted (as ``Client.generations.recover``)."""
        return await self._client._run(within(self._recover(), timeout))

    async def resume(
        self, *, wait: bool = False, download: bool | None = None, timeout: float | None = None
    ) -> builtins.list[Generation[AwaitingT]]:
        """Re-attach after a kernel restart: the current state of every journaled pending job (as
        ``Client.generations.resume``; ``wait=True`` also waits for the rest)."""
        return await self._client._run(within(self._resume(wait, download), timeout))


class AsyncModels(_ModelsBase):
    """The catalog: ``GET /v1/models``, ``/v1/models/{id}`` and the estimate endpoint."""

    _client: AwaitingClient

    async def list(
        self, *, type: str | None = None, timeout: float | None = None
    ) -> builtins.list[ModelInfo]:
        """The catalog: every model (of ``type``, when given)."""
        return await self._client._run(within(self._list(type), timeout))

    async def get(
        self, model_id: str, *, refresh: bool = False, timeout: float | None = None
    ) -> ModelInfo:
        """One model's catalog entry: modes, parameters, prices, its example request."""
        return await self._client._run(within(self._get(model_id, refresh), timeout))

    async def estimate(
        self, model_id: str, *, timeout: float | None = None, **query: Any
    ) -> Estimate:
        """The estimate endpoint with its query parameters as given (``estimate_request`` builds
        them from a request)."""
        return await self._client._run(within(self._estimate(model_id, query), timeout))

    async def estimate_request(
        self, request: Mapping[str, Any], *, timeout: float | None = None
    ) -> Estimate:
        """The price of exactly this request (a dict of body fields); nothing is submitted."""
        return await self._client._run(within(self._estimate_request(request), timeout))

    async def estimate_many(
        self, requests: Iterable[Mapping[str, Any]], *, timeout: float | None = None
    ) -> builtins.list[Estimate]:
        """One quote per request (for showing a batch's total before submitting it)."""
        return await self._client._run(within(self._estimate_many(requests), timeout))


class AsyncCreditsResource(_Resource):
    """``GET /v1/credits``."""

    _client: AwaitingClient

    async def get(self, *, timeout: float | None = None) -> Credits:
        """The credits: balance, reserved, plan, discount and the member's cap."""
        return await self._client._run(within(read_credits(self._client), timeout))


class AsyncUploads(_UploadsBase):
    """``POST /v1/uploads`` then a streamed PUT of the bytes to the signed URL."""

    _client: AwaitingClient

    async def create(
        self, *, filename: str, content_type: str, size_bytes: int, timeout: float | None = None
    ) -> UploadTicket:
        """Register an upload; returns the ticket (``upload_url``, ``required_headers``,
        ``expires_at``) to send the bytes with."""
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
        """Register a file (a path or bytes) and send it; returns its :class:`~mediagen.Asset`."""
        return await self._client._run(
            within(self._upload(source, filename, content_type, ticket), timeout)
        )

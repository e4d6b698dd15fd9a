"""The asyncio driver of ``mediagen.AsyncClient``: runs the shared flows with ``httpx.AsyncClient``
and ``await``.

Light to import (``_clients`` declares both public clients, so a ``Client()`` loads this module
too): asyncio, the resources, the effects and the retry plans load when an ``AsyncClient`` is
built or first called.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from mediagen.client._base import USER_AGENT, BaseClient
from mediagen.client._config import DEFAULT_CONCURRENCY, ssl_context
from mediagen.client._retry import Attempts, DeadlinePassed

if TYPE_CHECKING:
    from typing_extensions import Self

    from mediagen.client._async_resources import (
        AsyncAudio,
        AsyncGenerations,
        AsyncImages,
        AsyncVideos,
    )
    from mediagen.client._batch import BatchItem, BatchResult
    from mediagen.client._effects import Fetched, Flow, Put
    from mediagen.client._models import Generation
    from mediagen.client._requests import RequestSpec
    from mediagen.client._retry_plans import Plan

_T = TypeVar("_T")


class AsyncDriver(BaseClient):
    """What ``AsyncClient`` does (``_clients`` declares it, beside its blocking twin)."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Any] | None = None,
        **options: Any,
    ) -> None:
        import asyncio

        from mediagen.client._async_resources import (
            AsyncAudio,
            AsyncCreditsResource,
            AsyncGenerations,
            AsyncImages,
            AsyncModels,
            AsyncUploads,
            AsyncVideos,
        )

        super().__init__(api_key, base_url, **options)
        self._sleep = sleep or asyncio.sleep
        self._owns_http = http_client is None
        if http_client is None:
            timeout = self._config.timeout
            http_client = httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                headers={"User-Agent": USER_AGENT},
                follow_redirects=False,
                verify=ssl_context(),
            )
        self._http = http_client
        self._twin: Any = None  # the blocking twin, made on demand (``_sync_twin``)
        self.videos: AsyncVideos[Self] = AsyncVideos(self)
        self.images: AsyncImages[Self] = AsyncImages(self)
        self.audio: AsyncAudio[Self] = AsyncAudio(self)
        self.generations: AsyncGenerations[Self] = AsyncGenerations(self)
        self.models = AsyncModels(self)
        self.credits = AsyncCreditsResource(self)
        self.uploads = AsyncUploads(self)

    def resource(self, kind: str) -> AsyncVideos[Self] | AsyncImages[Self] | AsyncAudio[Self]:
        """The resource that submits ``kind`` (``"image"``, ``"video"``, ``"audio"``), for code
        that holds the kind as data: ``await client.resource(kind).create(**request)``."""
        from mediagen.wire._names import KIND_RESOURCES

        if kind not in KIND_RESOURCES:
            raise ValueError(f"kind must be one of {', '.join(KIND_RESOURCES)}, not {kind!r}")
        found: AsyncVideos[Self] | AsyncImages[Self] | AsyncAudio[Self] = getattr(
            self, KIND_RESOURCES[kind]
        )
        return found

    async def aclose(self) -> None:
        """Close the HTTP connections (done on leaving an ``async with`` block)."""
        if self._owns_http:
            await self._http.aclose()
        if self._twin is not None:
            self._twin.close()

    close = aclose

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def save(
        self, generation: Generation[Any], directory: str | Path = ".", *,
        timeout: float | None = None,
    ) -> list[Path]:  # fmt: skip
        """Save every output of ``generation`` into ``directory``; returns the paths.

        ``timeout`` (seconds) is a deadline for every download: past it, ``APITimeoutError``
        is raised and no partial file is left."""
        return await self._run(self._save(generation, directory, timeout))

    async def submit_batch(
        self,
        requests: Iterable[Mapping[str, Any]],
        *,
        kind: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        show_estimate: bool = True,
        on_estimate: Callable[[float, list[BatchItem[Self]]], Any] | None = None,
        max_credits: float | None = None,
    ) -> BatchResult[Self]:
        """As ``Client.submit_batch``: quote all, then at most ``concurrency`` submits at once."""
        import asyncio

        from mediagen.client import _batch

        result = await self._run(
            self._batch_prepare(
                requests, kind, concurrency, show_estimate, on_estimate, max_credits
            )
        )
        gate = asyncio.Semaphore(concurrency)

        async def one(item: Any) -> None:
            async with gate:
                await self._run(_batch.submit_item(self, item))

        await asyncio.gather(*(one(item) for item in _batch.runnable(result)))
        return result

    # --- running flows --------------------------------------------------------------------

    async def _run(self, flow: Flow[_T]) -> _T:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = flow.throw(error) if error is not None else flow.send(value)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                value = await self._perform(effect)
            except BaseException as exc:  # an interrupt or a cancel too: the flow cleans up
                error = exc

    async def _iterate(self, flow: Any) -> AsyncIterator[Any]:
        from mediagen.client._effects import Emit

        value: Any = None
        error: BaseException | None = None
        try:
            while True:
                try:
                    effect = flow.throw(error) if error is not None else flow.send(value)
                except StopIteration:
                    return
                value, error = None, None
                if type(effect) is Emit:
                    yield effect.item
                    continue
                try:
                    value = await self._perform(effect)
                except BaseException as exc:
                    error = exc
        finally:
            flow.close()

    async def _perform(self, effect: Any) -> Any:
        import asyncio

        from mediagen.client._effects import Blocking, Call, Fetch, Invoke, Now, Put, Sleep

        kind = type(effect)
        if kind is Call:
            return await self._call(effect.spec, effect.deadline, effect.persistent)
        if kind is Sleep:
            if effect.seconds > 0:
                await self._sleep(effect.seconds)
            return None
        if kind is Now:
            return self._clock()
        if kind is Invoke:
            result = effect.fn(*effect.args)
            if inspect.isawaitable(result):
                result = await result
            return result
        if kind is Blocking:
            return await asyncio.to_thread(effect.fn, *effect.args)
        if kind is Fetch:
            return await self._fetch(effect.url, effect.temp, effect.deadline)
        if kind is Put:
            return await self._put(effect)
        raise TypeError(f"unknown effect {effect!r}")

    # --- I/O: the retry loops are plans (``_retry_plans``); these make single attempts --

    async def _drive(self, plan: Plan[_T], attempt: Callable[[Attempts], Awaitable[Any]]) -> _T:
        from mediagen.client._retry_plans import Wait
        from mediagen.client._transport import scrub_chain

        reply: Any = None
        error: Exception | None = None
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(reply)
            except StopIteration as stop:
                return stop.value
            reply, error = None, None
            if isinstance(step, Wait):
                await self._sleep(step.seconds)
                continue
            try:
                reply = await attempt(step.tries)
            except Exception as exc:  # the plan decides: retry, or the error to raise
                error = scrub_chain(exc, self._secrets)  # no key on a request it holds

    async def _call(
        self, spec: RequestSpec, deadline: float | None = None, persistent: bool = False
    ) -> Any:
        from mediagen.client._retry_plans import call_plan

        url = self._config.base_url + spec.path
        headers = {**self._auth_headers, **spec.headers} if spec.headers else self._auth_headers
        return await self._drive(
            call_plan(self, spec, deadline, persistent),
            lambda tries: self._exchange(spec, url, headers, tries),
        )

    async def _exchange(
        self, spec: RequestSpec, url: str, headers: Any, tries: Attempts
    ) -> tuple[int, httpx.Headers, bytes]:
        """One attempt; with a deadline, the whole exchange (not each read) ends by it."""
        import asyncio

        timeout = tries.timeout(self._config.timeout)
        limit: Any = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
        send = self._http.request(
            spec.method, url, params=spec.params or None, json=spec.json, headers=headers,
            timeout=limit,
        )  # fmt: skip
        if timeout is None:
            response = await send
        else:
            # httpx times out each phase by the (cut) timeout; this ends the whole exchange
            # (a body trickling in) at the deadline itself.
            try:
                response = await asyncio.wait_for(send, tries.left())
            except asyncio.TimeoutError:
                raise DeadlinePassed() from None
        return response.status_code, response.headers, response.content

    async def _fetch(self, url: str, temp: Path, deadline: float | None = None) -> Fetched:
        from mediagen.client._retry_plans import fetch_plan

        return await self._drive(
            fetch_plan(self, url, deadline), lambda tries: self._fetch_once(url, temp, tries)
        )

    async def _fetch_once(self, url: str, temp: Path, tries: Attempts) -> Fetched | httpx.Response:
        """One download attempt: the file written, or the error response (its body read).

        With a deadline the whole attempt (redirects, headers, a body trickling in) ends by it:
        httpx's timeouts only bound each read."""
        import asyncio

        left = tries.left()
        if left is None:
            return await self._fetch_attempt(url, temp, tries)
        try:
            return await asyncio.wait_for(self._fetch_attempt(url, temp, tries), left)
        except asyncio.TimeoutError:
            raise DeadlinePassed() from None

    async def _fetch_attempt(
        self, url: str, temp: Path, tries: Attempts
    ) -> Fetched | httpx.Response:
        import asyncio

        from mediagen.client._retry_plans import attempt_timeout
        from mediagen.client._transport import (
            check_final_status,
            fetched,
            file_url_path,
            strip_auth,
        )

        request = strip_auth(self._http.build_request("GET", url, **attempt_timeout(self, tries)))
        response = await self._http.send(request, stream=True, follow_redirects=True, auth=None)
        try:
            check_final_status(response.status_code, file_url_path(url))
            if response.status_code >= 400:
                await response.aread()
                return response
            handle = await asyncio.to_thread(open, temp, "wb")
            size = 0
            try:
                async for chunk in response.aiter_bytes():
                    handle.write(chunk)
                    size += len(chunk)
                    tries.left()
            finally:
                handle.close()
            return fetched(response.headers, size)
        finally:
            await response.aclose()

    async def _put(self, effect: Put) -> Any:
        from mediagen.client._retry_plans import attempt_timeout, put_plan
        from mediagen.client._transport import strip_auth

        async def attempt(tries: Attempts) -> httpx.Response:
            content = effect.source.acontent()
            if not isinstance(content, bytes) and tries.deadline is not None:
                content = _until_deadline(content, tries)
            request = self._http.build_request(
                "PUT",
                effect.url,
                content=content,
                headers=effect.headers,
                **attempt_timeout(self, tries),
            )
            return await self._http.send(strip_auth(request), auth=None)

        return await self._drive(put_plan(self, effect.url, effect.deadline), attempt)


async def _until_deadline(chunks: AsyncIterator[bytes], tries: Attempts) -> AsyncIterator[bytes]:
    """The chunks of an upload, stopped at the call's deadline (as in the blocking driver)."""
    async for chunk in chunks:
        tries.left()
        yield chunk

"""The two drivers: ``SyncDriver`` runs the shared flows with ``httpx.Client``, ``AsyncDriver``
with ``httpx.AsyncClient`` and ``await``.

Light to import (``_clients`` declares both public clients over them, so a ``Client()`` loads
this module): asyncio, the resources, the effects and the retry plans load when a client is
first called, or an ``AsyncClient`` built.
"""

from __future__ import annotations

import inspect
import ssl
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpcore
import httpx

from mediagen.client._base import USER_AGENT, BaseClient
from mediagen.client._config import DEFAULT_CONCURRENCY, ssl_context
from mediagen.client._errors import WaitInterrupted
from mediagen.client._requests import Attempts, DeadlinePassed

if TYPE_CHECKING:
    from typing_extensions import Self

    from mediagen.client._batch import AsyncExecutor, BatchItem, BatchResult, Executor
    from mediagen.client._effects import Fetched, Flow, Put
    from mediagen.client._models import Generation
    from mediagen.client._requests import Attempts, RequestSpec
    from mediagen.client._resources import (
        AsyncAudio,
        AsyncGenerations,
        AsyncImages,
        AsyncVideos,
        Audio,
        CreditsResource,
        Generations,
        Images,
        Models,
        Uploads,
        Videos,
    )
    from mediagen.client._transport import Plan


# =================================================================================================
# The blocking driver of ``mediagen.Client``: runs the shared flows with ``httpx.Client``.
# =================================================================================================

# Only what constructing a client needs is imported above: the resources, the effects and the
# retry plans load on a client's first call (the resources' modules bring the rest), so
# ``import mediagen; mediagen.Client()`` stays close to ``import httpx; httpx.Client()``.

_T = TypeVar("_T")


class SyncDriver(BaseClient):
    """What ``Client`` does (``_clients`` declares it, beside its asyncio twin)."""

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], Any] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(api_key, base_url, **options)
        self._sleep = sleep or time.sleep
        self._owns_http = http_client is None
        if http_client is None:
            timeout = self._config.timeout
            http_client = httpx.Client(
                timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
                headers={"User-Agent": USER_AGENT},
                follow_redirects=False,
                verify=ssl_context(),
            )
            bound_blocking_reads(http_client)
        self._http = http_client

    # --- resources: built on first use ---------------------------------------------------

    @cached_property
    def videos(self) -> Videos[Self]:
        from mediagen.client._resources import Videos

        return Videos(self)

    @cached_property
    def images(self) -> Images[Self]:
        from mediagen.client._resources import Images

        return Images(self)

    @cached_property
    def audio(self) -> Audio[Self]:
        from mediagen.client._resources import Audio

        return Audio(self)

    def resource(self, kind: str) -> Videos[Self] | Images[Self] | Audio[Self]:
        """The resource that submits ``kind`` (``"image"``, ``"video"``, ``"audio"``), for code
        that holds the kind as data: ``client.resource(kind).create(**request)``."""
        from mediagen.wire._names import KIND_RESOURCES

        if kind not in KIND_RESOURCES:
            raise ValueError(f"kind must be one of {', '.join(KIND_RESOURCES)}, not {kind!r}")
        found: Videos[Self] | Images[Self] | Audio[Self] = getattr(self, KIND_RESOURCES[kind])
        return found

    @cached_property
    def generations(self) -> Generations[Self]:
        from mediagen.client._resources import Generations

        return Generations(self)

    @cached_property
    def models(self) -> Models:
        from mediagen.client._resources import Models

        return Models(self)

    @cached_property
    def credits(self) -> CreditsResource:
        from mediagen.client._resources import CreditsResource

        return CreditsResource(self)

    @cached_property
    def uploads(self) -> Uploads:
        from mediagen.client._resources import Uploads

        return Uploads(self)

    # --- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the HTTP connections (done on leaving a ``with`` block)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def save(
        self, generation: Generation[Any], directory: str | Path = ".", *,
        timeout: float | None = None,
    ) -> list[Path]:  # fmt: skip
        """Save every output of ``generation`` into ``directory``; returns the paths.

        ``timeout`` (seconds) is a deadline for every download: past it, ``APITimeoutError``
        is raised and no partial file is left."""
        return self._run(self._save(generation, directory, timeout))

    def submit_batch(
        self,
        requests: Iterable[Mapping[str, Any]],
        *,
        kind: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        show_estimate: bool = True,
        on_estimate: Callable[[float, list[BatchItem[Self]]], Any] | None = None,
        max_credits: float | None = None,
    ) -> BatchResult[Self]:
        """Submit many requests (dicts of body fields); one ``BatchItem`` per request, in order.

        Every request is quoted first and the total shown (printed, or passed to
        ``on_estimate(total, items)``, which can return False to cancel). If the total is over
        ``max_credits`` or an active budget, :class:`BudgetExceededError` is raised and nothing
        is sent. Then at most ``concurrency`` submits run at once. A failing item does not
        stop the others: its ``error`` is set. The kind (image, video, audio) comes from each
        model's catalog entry unless ``kind=`` (or a ``"kind"`` key in a request) says.
        """
        from concurrent.futures import as_completed

        from mediagen.client import _batch, _hooks

        result = self._run(
            self._batch_prepare(
                requests, kind, concurrency, show_estimate, on_estimate, max_credits
            )
        )
        todo = _batch.runnable(result)
        if todo:
            with (
                _hooks.progress(f"Submitting {len(todo)} requests", "request", len(todo)) as bar,
                self.executor(min(concurrency, len(todo))) as pool,
            ):
                futures = [pool.submit(self._run, _batch.submit_item(self, item)) for item in todo]
                for future in as_completed(futures):
                    future.result()
                    if bar is not None:
                        bar.advance()
        return result

    def executor(self, concurrency: int = DEFAULT_CONCURRENCY) -> Executor:
        """Run many calls of this client at once, at most ``concurrency`` at a time: the
        executor its batches and table runs use. ``with client.executor(8) as pool:
        futures = [pool.submit(client.images.create, **r) for r in requests]``; each call runs
        in a copy of the caller's context (an active ``mediagen.budget`` holds); leaving the
        block waits for every call, or on an error (Ctrl-C included) cancels what has not
        started."""
        from mediagen.client._batch import Executor

        return Executor(concurrency)

    # --- running flows --------------------------------------------------------------------

    def _run(self, flow: Flow[_T]) -> _T:
        from mediagen.client._effects import Steps

        steps = Steps(flow)
        for effect in steps:
            try:
                steps.answer(self._perform(effect))
            except BaseException as exc:  # an interrupt too: the flow cleans up and explains
                steps.fail(exc)
        return steps.result

    def _iterate(self, flow: Any) -> Iterator[Any]:
        """The items ``flow`` emits. An interruption is raised from here: its message says what
        is left, the frames of the flow and driver would not help."""
        from mediagen.client._effects import Emit, Steps

        __tracebackhide__ = True
        try:
            for effect in (steps := Steps(flow)):
                if type(effect) is Emit:
                    yield effect.item
                    continue
                try:
                    steps.answer(self._perform(effect))
                except BaseException as exc:
                    steps.fail(exc)
        except WaitInterrupted as exc:
            raise exc.with_traceback(None) from None
        finally:
            flow.close()

    def _perform(self, effect: Any) -> Any:
        from mediagen.client._effects import Blocking, Call, Fetch, Invoke, Now, Put, Sleep

        kind = type(effect)
        if kind is Call:
            return self._call(effect.spec, effect.deadline, effect.persistent)
        if kind is Sleep:
            if effect.seconds > 0:
                self._sleep(effect.seconds)
            return None
        if kind is Now:
            return self._clock()
        if kind is Invoke:
            result = effect.fn(*effect.args)
            if inspect.isawaitable(result):
                raise TypeError("a callback of the blocking Client must not be async")
            return result
        if kind is Blocking:
            return effect.fn(*effect.args)
        if kind is Fetch:
            return self._fetch(effect.url, effect.temp, effect.deadline)
        if kind is Put:
            return self._put(effect)
        raise TypeError(f"unknown effect {effect!r}")

    # --- I/O: the retry loops are plans (``_transport``); these make single attempts --

    def _drive(self, plan: Plan[_T], attempt: Callable[[Attempts], Any]) -> _T:
        from mediagen.client._effects import Steps
        from mediagen.client._transport import Wait, scrub_chain

        for step in (steps := Steps(plan)):
            if isinstance(step, Wait):
                self._sleep(step.seconds)
                continue
            try:
                steps.answer(attempt(step.tries))
            except Exception as exc:  # the plan decides: retry, or the error to raise
                steps.fail(scrub_chain(exc, self._secrets))  # no key on a request it holds
        return steps.result

    def _call(
        self, spec: RequestSpec, deadline: float | None = None, persistent: bool = False
    ) -> Any:
        from mediagen.client._transport import call_plan

        url = self._config.base_url + spec.path
        headers = {**self._auth_headers, **spec.headers} if spec.headers else self._auth_headers
        return self._drive(
            call_plan(self, spec, deadline, persistent),
            lambda tries: self._exchange(spec, url, headers, tries),
        )

    def _exchange(
        self, spec: RequestSpec, url: str, headers: Any, tries: Attempts
    ) -> tuple[int, httpx.Headers, bytes]:
        """One attempt; with a deadline, the whole exchange (not each read) ends by it."""
        timeout = tries.timeout(self._config.timeout)
        if timeout is None:
            response = self._http.request(
                spec.method, url, params=spec.params or None, json=spec.json, headers=headers
            )
            return response.status_code, response.headers, response.content
        request = self._http.build_request(
            spec.method, url, params=spec.params or None, json=spec.json, headers=headers,
            timeout=httpx.Timeout(timeout),
        )  # fmt: skip
        with reads_end_by(timeout):
            response = self._http.send(request, stream=True)
            try:
                chunks = []
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    tries.left()  # a body trickling past the deadline is abandoned
                return response.status_code, response.headers, b"".join(chunks)
            finally:
                response.close()

    def _fetch(self, url: str, temp: Path, deadline: float | None = None) -> Fetched:
        from mediagen.client._transport import fetch_plan

        return self._drive(
            fetch_plan(self, url, deadline), lambda tries: self._fetch_once(url, temp, tries)
        )

    def _fetch_once(self, url: str, temp: Path, tries: Attempts) -> Fetched | httpx.Response:
        """One download attempt: the file written, or the error response (its body read)."""
        from mediagen.client._transport import (
            attempt_timeout,
            check_final_status,
            cut_at,
            fetched,
            file_url_path,
            strip_auth,
        )

        request = strip_auth(self._http.build_request("GET", url, **attempt_timeout(self, tries)))
        with reads_end_by(tries.left()):  # the head too, which ``cut_at`` cannot reach
            response = self._http.send(request, stream=True, follow_redirects=True, auth=None)
            try:
                check_final_status(response.status_code, file_url_path(url))
                if response.status_code >= 400:
                    response.read()
                    return response
                size = 0
                with open(temp, "wb") as handle, cut_at(response, tries.left()):
                    # Each piece as it arrives (no re-chunking, which would hold a trickle
                    # back until a whole chunk came), so the deadline is checked after every
                    # read, and a read still waiting at the deadline is cut then (in an http
                    # client of the caller's too).
                    for chunk in response.iter_bytes():
                        handle.write(chunk)
                        size += len(chunk)
                        tries.left()
                return fetched(response.headers, size)
            finally:
                response.close()

    def _put(self, effect: Put) -> Any:
        from mediagen.client._transport import attempt_timeout, put_plan, strip_auth

        def attempt(tries: Attempts) -> httpx.Response:
            content = effect.source.content()
            if not isinstance(content, bytes) and tries.deadline is not None:
                content = _until_deadline(content, tries)
            request = self._http.build_request(
                "PUT",
                effect.url,
                content=content,
                headers=effect.headers,
                **attempt_timeout(self, tries),
            )
            with reads_end_by(tries.left()):
                return self._http.send(strip_auth(request), auth=None)

        return self._drive(put_plan(self, effect.url, effect.deadline), attempt)


def _until_deadline(chunks: Iterator[bytes], tries: Attempts) -> Iterator[bytes]:
    """The chunks of an upload, stopped at the call's deadline (a slow reader on the other
    end must not hold the call past it: each write's own timeout is the time left when the
    attempt began)."""
    for chunk in chunks:
        tries.left()
        yield chunk


# A blocking request's deadline, head included.
#
# httpx times each read, not a whole answer: a server sending its answer's head a byte at a
# time holds a blocking request for as long as it likes (the socket of a download is known,
# and cut by ``cut_at``, only once its head is in). So the http client a ``Client`` builds
# connects through a network backend whose every blocking read, write and connect waits no
# longer than the deadline of the request this thread is making.

_DEADLINE = threading.local()


@contextmanager
def reads_end_by(left: float | None) -> Iterator[None]:
    """Each blocking read, write or connect this thread makes through a bounded http client
    (:func:`bound_blocking_reads`) ends within ``left`` seconds from now (None: no bound)."""
    if left is None:
        yield
        return
    outer = getattr(_DEADLINE, "at", None)
    _DEADLINE.at = time.monotonic() + left
    try:
        yield
    finally:
        _DEADLINE.at = outer


def _within(timeout: float | None, late: type[Exception]) -> float | None:
    at = getattr(_DEADLINE, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise late("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _within(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _within(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = _within(timeout, httpcore.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, timeout, local_address, socket_options)
        return _BoundedStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        timeout = _within(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self._backend.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def bound_blocking_reads(http: httpx.Client) -> bool:
    """Make the connections of ``http`` (one the client built: its direct transport and the
    proxies of the environment) keep :func:`reads_end_by`. httpx has no public way to give
    its transport a network backend, so this reaches into httpx's and httpcore's pools; where
    they are not as expected it leaves them be (a download's body is still cut at its deadline).
    Whether every transport was bounded."""
    bounded = True
    for transport in (http._transport, *http._mounts.values()):
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if isinstance(backend, httpcore.NetworkBackend):
            if not isinstance(backend, _BoundedBackend):
                pool._network_backend = _BoundedBackend(backend)  # type: ignore[union-attr]
        elif transport is not None:
            bounded = False
    return bounded


# =================================================================================================
# The asyncio driver of ``mediagen.AsyncClient``: runs the shared flows with ``httpx.AsyncClient``
# and ``await``.
#
# Light to import (``_clients`` declares both public clients, so a ``Client()`` loads this module
# too): asyncio, the resources, the effects and the retry plans load when an ``AsyncClient`` is
# built or first called.
# =================================================================================================


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

        from mediagen.client._resources import (
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
        #: the HTTP client of each event loop that has called this one (an httpx connection
        #: belongs to the loop that opened it); the first is made now, for the first loop
        self._loop_http: dict[asyncio.AbstractEventLoop | None, httpx.AsyncClient] = {
            None: http_client or self._new_http()
        }
        self._loop_http_lock = threading.Lock()
        self._http_closed = False
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

    def _new_http(self) -> httpx.AsyncClient:
        timeout = self._config.timeout
        return httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"User-Agent": USER_AGENT},
            follow_redirects=False,
            verify=ssl_context(),
        )

    @property
    def _http(self) -> httpx.AsyncClient:
        """The HTTP client for the running loop. One ``AsyncClient`` may be awaited on several
        loops: a notebook's cells on the kernel's, a widget's click on a subshell's (ipykernel
        7), a script's ``asyncio.run`` after ``asyncio.run``; each loop gets connections of its
        own, over the one key, budget, pace and journal. A client given as ``http_client`` is
        its owner's, and is used as it is."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._loop_http_lock:
            clients = self._loop_http
            if not self._owns_http or loop is None or self._http_closed:
                return next(iter(clients.values()))  # closed: its calls say so, as httpx's do
            found = clients.get(loop)
            if found is None:
                for gone in [old for old in clients if old is not None and old.is_closed()]:
                    del clients[gone]  # its connections died with it
                found = clients.pop(None, None) or self._new_http()  # the first, not yet used
                clients[loop] = found
            return found

    async def aclose(self) -> None:
        """Close the HTTP connections (done on leaving an ``async with`` block): those of the
        running loop now, those of another loop that still runs on that loop."""
        import asyncio

        if self._owns_http:
            here = asyncio.get_running_loop()
            with self._loop_http_lock:
                self._http_closed = True
                opened = list(self._loop_http.items())
            for loop, http in opened:
                if loop is None or loop is here:
                    await http.aclose()
                elif loop.is_running():
                    asyncio.run_coroutine_threadsafe(http.aclose(), loop)
            closed = self._new_http()  # what every loop sees from now on
            await closed.aclose()
            with self._loop_http_lock:
                self._loop_http = {None: closed}
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

        from mediagen.client import _batch, _hooks

        result = await self._run(
            self._batch_prepare(
                requests, kind, concurrency, show_estimate, on_estimate, max_credits
            )
        )
        todo = _batch.runnable(result)
        if todo:
            shown = _hooks.progress(f"Submitting {len(todo)} requests", "request", len(todo))
            with shown as bar:
                async with self.executor(min(concurrency, len(todo))) as pool:
                    tasks = [pool.submit(self._run, _batch.submit_item(self, i)) for i in todo]
                    for done in asyncio.as_completed(tasks):
                        await done
                        if bar is not None:
                            bar.advance()
        return result

    def executor(self, concurrency: int = DEFAULT_CONCURRENCY) -> AsyncExecutor:
        """Run many calls of this client at once, at most ``concurrency`` at a time: the
        executor its batches and the compare grid use. ``async with aclient.executor(8) as
        pool: tasks = [pool.submit(aclient.images.create, **r) for r in requests]``; leaving
        the block waits for every call, or on an error (a cancel included) cancels what has
        not started."""
        from mediagen.client._batch import AsyncExecutor

        return AsyncExecutor(concurrency)

    # --- running flows --------------------------------------------------------------------

    async def _run(self, flow: Flow[_T]) -> _T:
        from mediagen.client._effects import Steps

        steps = Steps(flow)
        for effect in steps:
            try:
                steps.answer(await self._perform(effect))
            except BaseException as exc:  # an interrupt or a cancel too: the flow cleans up
                steps.fail(exc)
        return steps.result

    async def _iterate(self, flow: Any) -> AsyncIterator[Any]:
        from mediagen.client._effects import Emit, Steps

        try:
            for effect in (steps := Steps(flow)):
                if type(effect) is Emit:
                    yield effect.item
                    continue
                try:
                    steps.answer(await self._perform(effect))
                except BaseException as exc:
                    steps.fail(exc)
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

    # --- I/O: the retry loops are plans (``_transport``); these make single attempts --

    async def _drive(self, plan: Plan[_T], attempt: Callable[[Attempts], Awaitable[Any]]) -> _T:
        from mediagen.client._effects import Steps
        from mediagen.client._transport import Wait, scrub_chain

        for step in (steps := Steps(plan)):
            if isinstance(step, Wait):
                await self._sleep(step.seconds)
                continue
            try:
                steps.answer(await attempt(step.tries))
            except Exception as exc:  # the plan decides: retry, or the error to raise
                steps.fail(scrub_chain(exc, self._secrets))  # no key on a request it holds
        return steps.result

    async def _call(
        self, spec: RequestSpec, deadline: float | None = None, persistent: bool = False
    ) -> Any:
        from mediagen.client._transport import call_plan

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
        from mediagen.client._transport import fetch_plan

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

        from mediagen.client._transport import (
            attempt_timeout,
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
        from mediagen.client._transport import attempt_timeout, put_plan, strip_auth

        async def attempt(tries: Attempts) -> httpx.Response:
            content = effect.source.acontent()
            if not isinstance(content, bytes) and tries.deadline is not None:
                content = _async_until_deadline(content, tries)
            request = self._http.build_request(
                "PUT",
                effect.url,
                content=content,
                headers=effect.headers,
                **attempt_timeout(self, tries),
            )
            return await self._http.send(strip_auth(request), auth=None)

        return await self._drive(put_plan(self, effect.url, effect.deadline), attempt)


async def _async_until_deadline(
    chunks: AsyncIterator[bytes], tries: Attempts
) -> AsyncIterator[bytes]:
    """The chunks of an upload, stopped at the call's deadline (as in the blocking driver)."""
    async for chunk in chunks:
        tries.left()
        yield chunk

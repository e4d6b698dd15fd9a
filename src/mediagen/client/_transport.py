"""Moving bytes: every request's retry loop, downloads into the cache, and transport failures
as the client's errors.

Three parts, each written once for both drivers: the download flows (an output into the cache
or a folder, checked, refreshed when its URL expired), how a transport failure becomes a
client error (and what never goes to a file URL), and the retry plans that every API request,
download and upload runs through. The drivers only perform what these yield.
"""

from __future__ import annotations

import base64
import heapq
import itertools
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from mediagen.client import _requests
from mediagen.client._effects import (
    Blocking,
    Call,
    ClientCore,
    Fetch,
    Fetched,
    Flow,
    Now,
    earlier,
)
from mediagen.client._errors import (
    MASK,
    APIConnectionError,
    APITimeoutError,
    MediagenError,
    NotFoundError,
    PermissionDeniedError,
    UnexpectedResponseError,
    redact,
)
from mediagen.client._models import Generation, GenerationOutput
from mediagen.client._requests import (
    Attempts,
    DeadlinePassed,
    RequestSpec,
    decode_json,
    error_from_response,
)
from mediagen.local._cache import OutputCache, destination, is_kept, make_directory, safe_name
from mediagen.local._files import copy_atomic, temp_for, write_atomic

# =================================================================================================
# The output cache: generation outputs downloaded promptly, keyed by asset id.
#
# Output URLs are temporary, so the client copies each output into ``<cache_dir>/outputs/``
# as soon as it sees the generation completed (``wait(download=True)``). Downloads stream to a
# temporary file next to the target and are renamed into place (atomic: a crash never leaves a
# half file under the final name). What arrives is checked before it is kept: a 2xx after
# redirects, not empty, as long as its Content-Length said, and of the output's media type; a
# bad download raises :class:`DownloadError`, is never cached, and leaves no temporary file.
# An expired URL (403) is refreshed by re-reading the generation, once. A file name the
# server suggests is reduced to a plain name inside the target directory.
# =================================================================================================


class DownloadError(MediagenError):
    """An output could not be downloaded (wrong content type, no URL, ...)."""


def _major(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower().split("/", 1)[0]


def check_content_type(expected: str | None, got: str | None) -> None:
    if not expected or not got:
        return
    if _major(expected) != _major(got):
        raise DownloadError(f"The download is {got!r}, but the output is {expected!r}; not saved.")


def check_download(output: GenerationOutput, got: Fetched) -> None:
    """Raise DownloadError unless ``got`` can be this output's file."""
    where = (output.url or "").split("?", 1)[0]
    if got.size == 0:
        raise DownloadError(f"The download of {where} is empty; not saved.")
    if got.declared_size is not None and got.declared_size != got.size:
        raise DownloadError(
            f"The download of {where} is {got.size} bytes, but the server announced "
            f"{got.declared_size}; not saved."
        )
    check_content_type(output.content_type, got.content_type)


def _unlink(path: Path) -> None:
    path.unlink(missing_ok=True)


def download_output(
    client: ClientCore,
    output: GenerationOutput,
    target: str | Path | None = None,
    deadline: float | None = None,
) -> Flow[Path]:
    """Flow: make sure the output is in the cache; copy it to ``target`` if given.

    ``deadline`` (the driver's clock) bounds the download: a wait's timeout covers it too."""
    cache: OutputCache = client._cache
    final = cache.path_for(output)
    if not is_kept(final):
        yield Blocking(make_directory, (final.parent,))
        yield from _sealed_download(client, output, final, deadline)
    if target is None:
        return final
    dest = destination(output, final, target)
    copied = yield Blocking(copy_atomic, (final, dest))
    yield Blocking(seal_output, (output, copied))
    return copied


def seal_output(output: GenerationOutput[Any], path: Path, staged: Path | None = None) -> Path:
    """``path`` given its content credentials (see :mod:`mediagen.provenance`). A copy of a
    sealed cache file already carries the embedded manifest: it gets the cache file's sidecar,
    which ``seal`` then finds matching and leaves as it is. ``staged``: a download of the
    output not yet at ``path``, sealed where it is and renamed there."""
    from mediagen.provenance import build_record, seal
    from mediagen.provenance._sidecar import read_sidecar, write_sidecar

    client = getattr(output, "_client", None)
    cached = client._cache.path_for(output) if client is not None else None
    if cached is not None and cached != path:
        known = read_sidecar(cached)
        if known is not None:
            write_sidecar(path, known)
    sent = client._noted_request(output.generation_id) if client is not None else None
    record = build_record(output, staged or path, output.generation, sent)
    return seal(path, record, output.content_type, staged)


def save_output(
    client: ClientCore,
    output: GenerationOutput[Any],
    directory: str | Path,
    deadline: float | None = None,
    *,
    name: str | None = None,
) -> Flow[Path]:
    """Flow: the output saved in ``directory`` as ``name`` (default: the name
    ``download(directory)`` gives it) with no copy added to the cache, so it takes the disk
    once: copied from the cache when the cache holds it already, else downloaded straight into
    ``directory`` (streamed, atomic, checked and refreshed when expired, as every download is)."""
    cached = client._cache.path_for(output)
    dest = Path(directory).expanduser() / (name or safe_name(output.filename, cached.name))
    if is_kept(cached):
        copied = yield Blocking(copy_atomic, (cached, dest))
        return (yield Blocking(seal_output, (output, copied)))
    yield Blocking(make_directory, (dest.parent,))
    return (yield from _sealed_download(client, output, dest, deadline))


def _sealed_download(
    client: ClientCore, output: GenerationOutput, final: Path, deadline: float | None
) -> Flow[Path]:
    """Flow: the output at ``final`` with its content credentials. A download is sealed in its
    temporary file and then renamed into place, so a signed file is written once and ``final``
    never holds it unsigned."""
    if output.b64_json:
        yield Blocking(write_atomic, (final, base64.b64decode(output.b64_json)))
        return (yield Blocking(seal_output, (output, final)))
    staged = yield from _fetch_into(client, output, final, deadline)
    try:
        return (yield Blocking(seal_output, (output, final, staged)))
    except BaseException:
        yield Blocking(_unlink, (staged,))
        raise


def _fetch_into(
    client: ClientCore, output: GenerationOutput, final: Path, deadline: float | None
) -> Flow[Path]:
    """Flow: the output downloaded beside ``final`` by ``deadline`` and checked; the temporary
    file it is in, for the caller to rename to ``final``. Without a deadline, within the
    client's ``timeout``, so a server that trickles bytes (each read in time, the whole never)
    cannot hold a call, a table run or a server's handler for ever."""
    if deadline is None:
        deadline = (yield Now()) + client._config.timeout
    refreshed = False
    while True:
        if not output.url:
            raise DownloadError(f"output {output.asset_id} has no URL")
        temp = temp_for(final)
        try:
            got = yield Fetch(output.url, temp, deadline)
        except (PermissionDeniedError, NotFoundError):
            yield Blocking(_unlink, (temp,))
            if refreshed or not output.generation_id:
                raise
            # The URL expired (or was rotated): re-read the generation for a fresh one.
            data = yield Call(_requests.get_generation(output.generation_id), deadline=deadline)
            fresh = Generation.from_dict(data, client=client)
            match = next((o for o in fresh.outputs if o.asset_id == output.asset_id), None)
            if match is None or not match.url:
                raise
            output.url = match.url
            output.raw["url"] = match.url
            refreshed = True
            continue
        except BaseException:
            yield Blocking(_unlink, (temp,))
            raise
        try:
            check_download(output, got)
        except DownloadError:
            yield Blocking(_unlink, (temp,))
            raise
        return temp


def save_generation(
    client: ClientCore,
    generation: Generation[Any],
    directory: str | Path | None,
    deadline: float | None = None,
) -> Flow[list[Path]]:
    """Flow: every output of ``generation`` into the cache (and ``directory``); the paths."""
    paths = []
    for output in generation.outputs:
        paths.append((yield from download_output(client, output, directory, deadline)))
    return paths


def save_within(
    client: ClientCore,
    generation: Generation[Any],
    directory: str | Path | None,
    timeout: float | None,
) -> Flow[list[Path]]:
    """Flow: :func:`save_generation` with ``timeout`` seconds as its deadline (None: none)."""
    deadline = None if timeout is None else (yield Now()) + timeout
    return (yield from save_generation(client, generation, directory, deadline))


# =================================================================================================
# Transport failures as the client's errors, and what never goes to file URLs.
# =================================================================================================

NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


def connection_error(
    exc: Exception, method: str, where: str, secrets: tuple[str, ...] = ()
) -> APIConnectionError:
    """An APIConnectionError / APITimeoutError for a transport failure; the transport's text
    is redacted (a protocol error may quote a header it refused)."""
    cls = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    what = "timed out" if cls is APITimeoutError else "failed"
    return cls(
        f"{method} {where} {what} after retries: {type(exc).__name__}: {redact(str(exc), secrets)}",
        method=method,
        path=where,
    )


def deadline_error(
    method: str,
    where: str,
    seconds: float | None = None,
    attempts: int | None = None,
    last: str | None = None,
    held: bool = False,
) -> APITimeoutError:
    """The request could not be answered within the time its caller had left: within its
    ``seconds`` deadline, after ``attempts`` tries, the ``last`` of which met ``last``;
    ``held``: the key's rate limit held or refused (429) every attempt, so the service acted
    on none."""
    text = f"{method} {where} got no answer before the deadline"
    if seconds is not None:
        # to a tenth: the time the request had, counted from its own start, is a few
        # milliseconds short of the call's timeout when the call did something first
        text = f"{method} {where} got no answer within its {round(seconds, 1):g} s deadline"
    tried = None if attempts is None else f"{attempts} attempt{'' if attempts == 1 else 's'}"
    if held:
        said = f" ({tried}; last: {last})" if attempts and last else ""
        text += (
            f"{said}: the key's rate limit held it all that time, so the service made and "
            "charged nothing (the same call sends it again)"
        )
    elif tried is not None:
        text += f" ({tried}, retries and pauses included" + (f"; last: {last})" if last else ")")
    error = APITimeoutError(text, method=method, path=where)
    error.held_by_limit = held
    return error


def file_url_path(url: str) -> str:
    """A file URL without its query (the signature) for messages."""
    return url.split("?", 1)[0]


def strip_auth(request: httpx.Request) -> httpx.Request:
    """Upload and output URLs never get the API key, whatever the http client's defaults."""
    for name in ("Authorization", "Proxy-Authorization"):
        if name in request.headers:
            del request.headers[name]
    return request


def check_final_status(status: int, where: str) -> None:
    """After redirects a download must end in a 2xx (an error status is raised by the caller):
    a 3xx left over (no Location, 304 ...) or a 1xx is no file."""
    if status < 200 or 300 <= status < 400:
        raise DownloadError(f"GET {where} ended with HTTP {status}, not a file; not saved")


def fetched(headers: httpx.Headers, size: int) -> Fetched:
    declared = headers.get("content-length")
    return Fetched(
        headers.get("content-type"),
        size,
        int(declared) if declared and declared.isdigit() else None,
    )


@contextmanager
def cut_at(response: httpx.Response, left: float | None) -> Iterator[None]:
    """A blocking read waits up to its timeout, which was fixed when the body began; with
    ``left`` seconds to a deadline, the connection is shut then, so a read still blocked ends
    at the deadline itself (as an incomplete body) instead of up to a whole timeout later."""
    stream = response.extensions.get("network_stream")
    sock = None if stream is None else stream.get_extra_info("socket")
    if left is None or not isinstance(sock, socket.socket):
        yield
        return
    token = _CUTTER.add(left, sock)
    try:
        yield
    finally:
        _CUTTER.cancel(token)


class _Cutter:
    """The one thread of a process that shuts the sockets of downloads at their deadlines.

    Not a thread per download: on CPython 3.11 (before 3.11.9) starting or ending a thread
    takes the runtime's lock while holding the GIL, and ``sys._current_frames()`` (which a Dask
    worker's profiler calls every few milliseconds) holds that lock while a garbage collection
    it set off runs Python code, which waits for the GIL: the two deadlock, and the whole
    process (its downloads, its heartbeats) stops for good. A table run starts hundreds of
    thousands of downloads; each one starting and ending a thread made that likely."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._due: list[tuple[float, int]] = []  # (when, token), a heap; cancelled ones stay
        self._socks: dict[int, socket.socket] = {}  # token -> socket, for the pending ones
        self._count = itertools.count()
        self._thread: threading.Thread | None = None

    def add(self, left: float, sock: socket.socket) -> int:
        """Shut ``sock`` in ``left`` seconds unless ``cancel(token)`` comes first."""
        with self._cond:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="mediagen-deadlines", daemon=True)
                thread.start()
                self._thread = thread
            token = next(self._count)
            self._socks[token] = sock
            heapq.heappush(self._due, (time.monotonic() + left, token))
            self._cond.notify()
        return token

    def cancel(self, token: int) -> None:
        """After this returns, the socket of ``token`` is not shut by this cutter."""
        with self._cond:
            self._socks.pop(token, None)

    def _run(self) -> None:
        with self._cond:
            while True:
                while self._due and self._due[0][1] not in self._socks:
                    heapq.heappop(self._due)  # cancelled
                if not self._due:
                    self._cond.wait()
                    continue
                when, token = self._due[0]
                wait = when - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._due)
                _shut(self._socks.pop(token))  # under the lock: a cancel has not returned


_CUTTER = _Cutter()
if hasattr(os, "register_at_fork"):  # a forked child has no cutter thread, maybe a held lock
    os.register_at_fork(after_in_child=_CUTTER._reset)


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):  # already closed: the download ended on its own
        sock.shutdown(socket.SHUT_RDWR)


#: request headers that carry a credential, whatever their value
CREDENTIAL_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "cookie")


_E = TypeVar("_E", bound=BaseException)


def scrub_chain(exc: _E, secrets: tuple[str, ...] = ()) -> _E:
    """``exc`` and every exception chained to it (``__cause__``, ``__context__``) with the
    headers of the requests they hold masked: httpx keeps the failed request on its errors
    (``.request``), Authorization included, and an error reporter that serialises a chain
    would send the key along. The requests are done with (each attempt builds its own)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        found = pending.pop()
        if found is None or id(found) in seen:
            continue
        seen.add(id(found))
        request = getattr(found, "_request", None)  # httpx.RequestError (``.request`` raises)
        response = getattr(found, "response", None)  # httpx.HTTPStatusError
        for held in (request, getattr(response, "request", None)):
            if isinstance(held, httpx.Request):
                held.headers = masked_headers(held.headers, secrets)
        pending += [found.__cause__, found.__context__]
    return exc


def masked_headers(headers: httpx.Headers, secrets: tuple[str, ...]) -> httpx.Headers:
    """A copy of ``headers`` with every credential header (and any value holding a secret)
    replaced by the mask."""
    kept = []
    for name, value in headers.multi_items():
        if name.lower() in CREDENTIAL_HEADERS or any(s and s in value for s in secrets):
            value = MASK
        kept.append((name, value))
    return httpx.Headers(kept)


# =================================================================================================
# The retry loops of every request, written once and free of I/O.
#
# A plan is a generator that says what to do next: :class:`Wait` (pause that long) or
# :class:`Send` (make one attempt now; the attempt's ``tries`` bounds its timeout). The driver
# (``Client`` with blocking calls, ``AsyncClient`` with ``await``) performs the step and sends
# the outcome back, or throws the attempt's exception in; the plan decides whether to retry,
# how long to wait, and which error to raise. The shape of the attempt's outcome is the plan's:
#
# - :func:`call_plan` (API requests): ``(status, headers, content)``;
# - :func:`fetch_plan` (downloads): the :class:`Fetched` written, or the error response;
# - :func:`put_plan` (uploads): the response.
# =================================================================================================

log = logging.getLogger("mediagen")

_T = TypeVar("_T")


@dataclass(frozen=True)
class Wait:
    """Pause ``seconds`` before the next step."""

    seconds: float


@dataclass(frozen=True)
class Send:
    """Make one attempt now; ``tries`` cuts its timeout to the deadline (``tries.left()``
    raises :class:`DeadlinePassed` from a body trickling past it)."""

    tries: Attempts


#: what a plan yields, what it is sent, what it returns
Plan = Generator["Wait | Send", Any, _T]


def call_plan(
    client: ClientCore, spec: RequestSpec, deadline: float | None = None, persistent: bool = False
) -> Plan[Any]:
    """An API request through the key's gate, retried per the policy; the decoded JSON.

    The request ends by ``deadline`` and, unless it is a wait's ``persistent`` poll (which the
    wait's own timeout bounds), within the client's ``timeout`` of its start: attempts, backoff
    and ``Retry-After`` pauses included. Then :class:`APITimeoutError` says what was last heard.
    """
    start = client._clock()
    if not persistent:
        deadline = earlier(deadline, start + client._config.timeout)
    tries, gate = Attempts(client._policy, client._clock, deadline, persistent), client._gate
    sent, last, unreadable, sent_at = 0, None, 0, 0.0
    # whether the service may have acted on an attempt: each answered 429 is a refusal
    acted = False
    try:
        while True:
            seen = gate.penalties
            hold, reserved = gate.reserve()
            while hold > 0 or not reserved:
                yield Wait(tries.pause(hold))
                hold = 0.0
                if not reserved:  # its slot was too far ahead to hold: ask for one now
                    seen = gate.penalties
                    hold, reserved = gate.reserve()
                elif gate.penalties != seen and gate.blocked_for > 0:
                    # a 429 that came back while this request was held holds it again
                    seen = gate.penalties
                    hold, reserved = gate.reserve()
            try:
                sent, sent_at = sent + 1, gate.clock()
                status, headers, content = yield Send(tries)
                if status != 429:
                    acted = True
                    gate.answered()
                if status < 300:
                    data = _answer(status, content, spec.decode)
                    return (
                        data if spec.expect is None else spec.expect(data, spec.method, spec.path)
                    )
            except httpx.DecodingError as exc:
                acted, last, unreadable = True, type(exc).__name__, unreadable + 1
                yield Wait(_after_unreadable_answer(client, spec, tries, exc, unreadable))
                continue
            except httpx.TransportError as exc:
                acted, last = True, type(exc).__name__
                yield Wait(_after_transport_error(client, spec, tries, exc))
                continue
            last = f"HTTP {status}"
            delay, hint = _after_error_status(client, spec, tries, status, headers, content)
            if status == 429:
                # the key's pace drops, and every request of the key (this one with the
                # rest, at the gate) waits the service's whole Retry-After
                gate.penalize(max(delay, hint or 0.0), sent_at)
            else:
                yield Wait(delay)
    except DeadlinePassed:
        given = None if deadline is None else deadline - start
        raise deadline_error(spec.method, spec.path, given, sent, last, held=not acted) from None


def _answer(status: int, content: bytes, decode: Callable[[bytes], Any] | None = None) -> Any:
    """The JSON of a 2xx answer (or what ``decode`` reads from it). A body that is not JSON (a
    proxy's page, a cut answer) is an answer lost on the way, not an empty one: the service may
    have acted on the request."""
    if decode is not None:
        try:
            return decode(content)
        except ValueError:
            if decode_json(content) is not None:
                raise  # JSON the decoder cannot read: its own error says why
        raise httpx.DecodingError(f"the HTTP {status} answer's body is not JSON")
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        raise httpx.DecodingError(f"the HTTP {status} answer's body is not JSON") from None


def fetch_plan(client: ClientCore, url: str, deadline: float | None = None) -> Plan[Fetched]:
    """A download of a file URL (redirects followed by the attempt), retried per the policy."""
    return _file_plan(client, "GET", url, deadline, _fetched)


def put_plan(client: ClientCore, url: str, deadline: float | None = None) -> Plan[Any]:
    """An upload of bytes to a signed URL, retried per the policy; the decoded JSON. With a
    ``deadline``, each attempt's timeout and each pause are cut to the time left."""
    return _file_plan(client, "PUT", url, deadline, _put)


#: what a transfer's ``outcome`` says of an answer to retry (an error status)
_AGAIN: Any = object()


def _fetched(got: Any, tries: Attempts) -> Any:
    return got if isinstance(got, Fetched) else _AGAIN


def _put(response: Any, tries: Attempts) -> Any:
    if response.status_code < 300:
        return decode_json(response.content)
    if response.status_code == 409 and tries.count > 0:
        return {"status": "ready"}  # an earlier attempt delivered the bytes
    return _AGAIN


def _file_plan(
    client: ClientCore,
    method: str,
    url: str,
    deadline: float | None,
    outcome: Callable[[Any, Attempts], Any],
) -> Plan[Any]:
    """A transfer to or from a file URL (outside ``/v1``), retried per the policy until
    ``outcome(answer, tries)`` is not ``_AGAIN``; each pause cut to the deadline."""
    where, start = file_url_path(url), client._clock()
    tries = Attempts(client._policy, client._clock, deadline)
    try:
        while True:
            try:
                got = yield Send(tries)
            except httpx.TooManyRedirects:
                raise DownloadError(f"{method} {where} redirects without end; not saved") from None
            except httpx.TransportError as exc:
                yield Wait(_file_transport_delay(client, tries, exc, method, where))
                continue
            done = outcome(got, tries)
            if done is not _AGAIN:
                return done
            yield Wait(_file_error_delay(client, tries, got, method, where))
    except DeadlinePassed:
        raise deadline_error(method, where, _had(deadline, start)) from None


def _had(deadline: float | None, start: float) -> float | None:
    """The seconds a transfer had from its start to its deadline (None: no deadline)."""
    return None if deadline is None else deadline - start


def attempt_timeout(client: ClientCore, tries: Attempts) -> dict[str, Any]:
    """The ``timeout=`` of the next attempt when a deadline cuts it, else nothing."""
    timeout = tries.timeout(client._config.timeout)
    return {} if timeout is None else {"timeout": httpx.Timeout(timeout)}


# --- the decisions ------------------------------------------------------------------------


def _after_transport_error(
    client: ClientCore, spec: RequestSpec, tries: Attempts, exc: Exception
) -> float:
    """The pause before retrying after a transport failure; raises when it is final."""
    delay = tries.next_delay(
        connection_error=True,
        idempotent=spec.idempotent,
        sent=not isinstance(exc, NOT_SENT),
    )
    if delay is None:
        raise connection_error(exc, spec.method, spec.path, client._secrets) from None
    log.info("mediagen: %s %s: %s; retry in %.2fs", spec.method, spec.path,
             type(exc).__name__, delay)  # fmt: skip
    return delay


def _after_unreadable_answer(
    client: ClientCore, spec: RequestSpec, tries: Attempts, exc: Exception, unreadable: int
) -> float:
    """The pause before asking again after a 2xx whose body is not JSON; raises when final.

    Such a body (a captive portal's page, a proxy's, a cut answer) is retried like a lost
    answer, but at most ``max_retries`` times even by a wait's poll, which rides out outages:
    a page that keeps coming is no outage, and polling it would never end. A read then raises
    :class:`UnexpectedResponseError` naming the endpoint; a submit, whose job may exist, the
    connection error that carries its key for recovery.
    """
    delay = None
    if unreadable <= client._policy.max_retries:
        delay = tries.next_delay(connection_error=True, idempotent=spec.idempotent, sent=True)
    if delay is not None:
        return delay
    if spec.method == "GET":
        raise UnexpectedResponseError(str(exc), method=spec.method, path=spec.path) from None
    raise connection_error(exc, spec.method, spec.path, client._secrets) from None


def _after_error_status(
    client: ClientCore,
    spec: RequestSpec,
    tries: Attempts,
    status: int,
    headers: httpx.Headers,
    content: bytes,
) -> tuple[float, float | None]:
    """The pause before retrying after an error status (cut to the deadline) and the
    service's ``Retry-After``; raises the error when final."""
    error = error_from_response(
        status, headers, content, method=spec.method, path=spec.path, secrets=client._secrets
    )
    hint = getattr(error, "retry_after", None)
    # A 429 while the key's pace is being learned is how it is learned, not a failure: it
    # does not use up a retry (the call's deadline still bounds it; max_retries=0 raises it).
    learning = status == 429 and not client._gate.rate
    delay = tries.next_delay(
        status=status, retry_after=hint, idempotent=spec.idempotent, counted=not learning
    )
    if delay is None:
        raise error
    log.info("mediagen: %s %s: HTTP %s; retry in %.2fs", spec.method, spec.path,
             status, delay)  # fmt: skip
    return delay, hint


def _file_error_delay(
    client: ClientCore, tries: Attempts, response: httpx.Response, method: str, where: str
) -> float:
    """The pause before retrying an upload/download URL's error status; raises if final."""
    error = error_from_response(
        response.status_code, response.headers, response.content, method=method,
        path=where, secrets=client._secrets,
    )  # fmt: skip
    delay = tries.next_delay(status=response.status_code)
    if delay is None:
        raise error
    return delay


def _file_transport_delay(
    client: ClientCore, tries: Attempts, exc: Exception, method: str, where: str
) -> float:
    """The pause before retrying an upload/download URL after a transport failure."""
    delay = tries.next_delay(connection_error=True)
    if delay is None:
        raise connection_error(exc, method, where, client._secrets) from None
    return delay

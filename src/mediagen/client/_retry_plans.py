"""The retry loops of every request, written once and free of I/O.

A plan is a generator that says what to do next: :class:`Wait` (pause that long) or
:class:`Send` (make one attempt now; the attempt's ``tries`` bounds its timeout). The driver
(``Client`` with blocking calls, ``AsyncClient`` with ``await``) performs the step and sends
the outcome back, or throws the attempt's exception in; the plan decides whether to retry,
how long to wait, and which error to raise. The shape of the attempt's outcome is the plan's:

- :func:`call_plan` (API requests): ``(status, headers, content)``;
- :func:`fetch_plan` (downloads): the :class:`Fetched` written, or the error response;
- :func:`put_plan` (uploads): the response.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from mediagen.client._deadline import earlier
from mediagen.client._download import DownloadError
from mediagen.client._effects import Fetched
from mediagen.client._errors import UnexpectedResponseError
from mediagen.client._requests import RequestSpec, decode_json, error_from_response
from mediagen.client._retry import Attempts, DeadlinePassed
from mediagen.client._transport import NOT_SENT, connection_error, deadline_error, file_url_path

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
    client: Any, spec: RequestSpec, deadline: float | None = None, persistent: bool = False
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
    sent, last, unreadable = 0, None, 0
    try:
        while True:
            seen, hold = gate.penalties, gate.acquire()
            while hold > 0:
                yield Wait(tries.pause(hold))
                hold = 0.0
                if gate.penalties != seen and gate.blocked_for > 0:
                    # a 429 that came back while this request was held holds it again
                    seen, hold = gate.penalties, gate.acquire()
            try:
                sent += 1
                status, headers, content = yield Send(tries)
                if status < 300:
                    data = _answer(status, content, spec.decode)
                    return (
                        data if spec.expect is None else spec.expect(data, spec.method, spec.path)
                    )
            except httpx.DecodingError as exc:
                last, unreadable = type(exc).__name__, unreadable + 1
                yield Wait(_after_unreadable_answer(client, spec, tries, exc, unreadable))
                continue
            except httpx.TransportError as exc:
                last = type(exc).__name__
                yield Wait(_after_transport_error(client, spec, tries, exc))
                continue
            last = f"HTTP {status}"
            delay, hint = _after_error_status(client, spec, tries, status, headers, content)
            if status == 429:
                # every request of this key waits, not just this one, and the service's whole
                # Retry-After even when this call's deadline comes sooner
                gate.penalize(max(delay, hint or 0.0))
            else:
                yield Wait(delay)
    except DeadlinePassed:
        waited = None if deadline is None else deadline - start
        raise deadline_error(spec.method, spec.path, waited, sent, last) from None


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


def fetch_plan(client: Any, url: str, deadline: float | None = None) -> Plan[Fetched]:
    """A download of a file URL (redirects followed by the attempt), retried per the policy."""
    where, start = file_url_path(url), client._clock()
    tries = Attempts(client._policy, client._clock, deadline)
    try:
        while True:
            try:
                got = yield Send(tries)
            except httpx.TooManyRedirects:
                raise DownloadError(f"GET {where} redirects without end; not saved") from None
            except httpx.TransportError as exc:
                yield Wait(_file_transport_delay(client, tries, exc, "GET", where))
                continue
            if isinstance(got, Fetched):
                return got
            yield Wait(_file_error_delay(client, tries, got, "GET", where))
    except DeadlinePassed:
        raise deadline_error("GET", where, _had(deadline, start)) from None


def put_plan(client: Any, url: str, deadline: float | None = None) -> Plan[Any]:
    """An upload of bytes to a signed URL, retried per the policy; the decoded JSON. With a
    ``deadline``, each attempt's timeout and each pause are cut to the time left."""
    where, start = file_url_path(url), client._clock()
    tries = Attempts(client._policy, client._clock, deadline)
    try:
        while True:
            try:
                response = yield Send(tries)
            except httpx.TransportError as exc:
                yield Wait(_file_transport_delay(client, tries, exc, "PUT", where))
                continue
            if response.status_code < 300:
                return decode_json(response.content)
            if response.status_code == 409 and tries.count > 0:
                return {"status": "ready"}  # an earlier attempt delivered the bytes
            yield Wait(_file_error_delay(client, tries, response, "PUT", where))
    except DeadlinePassed:
        raise deadline_error("PUT", where, _had(deadline, start)) from None


def _had(deadline: float | None, start: float) -> float | None:
    """The seconds a transfer had from its start to its deadline (None: no deadline)."""
    return None if deadline is None else deadline - start


def attempt_timeout(client: Any, tries: Attempts) -> dict[str, Any]:
    """The ``timeout=`` of the next attempt when a deadline cuts it, else nothing."""
    timeout = tries.timeout(client._config.timeout)
    return {} if timeout is None else {"timeout": httpx.Timeout(timeout)}


# --- the decisions ------------------------------------------------------------------------


def _after_transport_error(client: Any, spec: Any, tries: Attempts, exc: Exception) -> float:
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
    client: Any, spec: Any, tries: Attempts, exc: Exception, unreadable: int
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
    client: Any, spec: Any, tries: Attempts, status: int, headers: Any, content: bytes
) -> tuple[float, float | None]:
    """The pause before retrying after an error status (cut to the deadline) and the
    service's ``Retry-After``; raises the error when final."""
    error = error_from_response(
        status, headers, content, method=spec.method, path=spec.path, secrets=client._secrets
    )
    hint = getattr(error, "retry_after", None)
    delay = tries.next_delay(status=status, retry_after=hint, idempotent=spec.idempotent)
    if delay is None:
        raise error
    log.info("mediagen: %s %s: HTTP %s; retry in %.2fs", spec.method, spec.path,
             status, delay)  # fmt: skip
    return delay, hint


def _file_error_delay(
    client: Any, tries: Attempts, response: Any, method: str, where: str
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
    client: Any, tries: Attempts, exc: Exception, method: str, where: str
) -> float:
    """The pause before retrying an upload/download URL after a transport failure."""
    delay = tries.next_delay(connection_error=True)
    if delay is None:
        raise connection_error(exc, method, where, client._secrets) from None
    return delay

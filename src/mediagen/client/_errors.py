"""Exceptions: one per status/code of the spec, plus connection, timeout and local errors.

Every API error carries ``status``, ``code``, ``message``, ``details`` (422: one entry per
field), ``trace_id``; ``RateLimitError`` adds ``retry_after``; ``PaymentRequiredError`` adds
``required`` / ``available`` (from structured data, not the message). None of them ever holds
the API key: they are built from the response body (redacted), never from request headers.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class MediagenError(Exception):
    """Base of every exception raised by mediagen."""


class APIError(MediagenError):
    """An error response of the service (any non-2xx status)."""

    status: int | None
    code: str | None
    #: set on a submit whose outcome is unknown (5xx): the key that recovers the job
    idempotency_key: str | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        details: Sequence[Mapping[str, Any]] | None = None,
        trace_id: str | None = None,
        method: str | None = None,
        path: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details: list[dict[str, Any]] = [dict(d) for d in details or ()]
        self.trace_id = trace_id
        self.method = method
        self.path = path
        self.body = body

    def __str__(self) -> str:
        head = []
        if self.status is not None:
            head.append(str(self.status))
        if self.code:
            head.append(self.code)
        text = f"[{' '.join(head)}] {self.message}" if head else self.message
        if self.method and self.path:
            text += f" ({self.method} {self.path})"
        for problem in self.details:
            text += f"\n  - {format_detail(problem)}"
        if self.trace_id:
            text += f"\n  trace_id: {self.trace_id}"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"message={self.message!r}, trace_id={self.trace_id!r})"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # picklable (keyword-only args)
        state = dict(self.__dict__)
        return (_rebuild, (type(self), self.message, state))


def _rebuild(cls: type[APIError], message: str, state: dict[str, Any]) -> APIError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


def format_detail(problem: Mapping[str, Any]) -> str:
    """``body.duration_seconds: must be one of 5, 10`` from a 422 detail entry."""
    loc = problem.get("loc") or ()
    if isinstance(loc, str):
        loc = [loc]
    where = ".".join(str(p) for p in loc)
    msg = problem.get("msg") or problem.get("message") or ""
    kind = problem.get("type")
    return f"{where}: {msg}" + (f" [{kind}]" if kind else "")


class BadRequestError(APIError):
    """400 or another 4xx the spec does not name (``client_error``)."""


class AuthenticationError(APIError):
    """401 ``unauthenticated`` / ``invalid_api_key``: missing, invalid, revoked or expired key."""


class PaymentRequiredError(APIError):
    """402 ``payment_required``: credits (or the member cap) do not cover the request.

    Nothing ran and nothing was reserved. ``required`` (the request's price after discount) and
    ``available`` (what the key can spend now: the balance, or what is left of the member cap)
    are numbers, never read from the message (which is not meant for parsing): from the error
    body's ``required_credits`` / ``available_credits`` where the service sends them, else from
    the estimate and ``GET /v1/credits`` when a submit is refused; None when unknown. ``str()``
    adds them in words ("needs 12.5 credits, 3 available").
    """

    required: float | None = None
    available: float | None = None

    @property
    def needed(self) -> float | None:
        """``required``, by the name of earlier releases."""
        return self.required

    @needed.setter
    def needed(self, value: float | None) -> None:
        self.required = value

    @property
    def shortfall(self) -> str | None:
        """The figures in words, "needs 12.5 credits, 3 available" (None while neither is
        known)."""
        if self.required is None and self.available is None:
            return None
        if self.required is None:
            need = "needs more credits"
        else:
            need = f"needs {self.required:g} credit{'' if self.required == 1 else 's'}"
        have = "" if self.available is None else f", {self.available:g} available"
        return need + have

    def __str__(self) -> str:
        text = super().__str__()
        shortfall = self.shortfall
        return f"{text}\n  {shortfall}" if shortfall else text


class PermissionDeniedError(APIError):
    """403 ``forbidden`` / ``api_key_scope``: not allowed for this key or organization."""


class NotFoundError(APIError):
    """404 ``not_found``."""


class ConflictError(APIError):
    """409 ``conflict``: an idempotency key reused with a different request body."""


class ValidationError(APIError, ValueError):
    """422 ``validation_error``; ``details`` lists the offending fields (loc, msg, type)."""


class LocalValidationError(ValidationError):
    """The request was checked against the catalog before sending and is not valid.

    Nothing was sent. ``details`` has the same shape as the server's 422.
    """


class UnknownFieldError(LocalValidationError, TypeError):
    """A keyword argument that no submit endpoint of the spec knows (use ``extra_body=``)."""


class RateLimitError(APIError):
    """429 ``rate_limited``; ``retry_after`` (seconds) from the ``Retry-After`` header."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(APIError):
    """5xx (``internal_error``): the service failed; retried automatically before raising."""


class _NoAnswer(MediagenError):
    """An error the service gave no readable answer for: the fields an ``APIError`` reads from
    an answer (``status``, ``code``, ``details``, ``trace_id``) are there and empty, so one
    ``except`` can report either kind alike. ``method`` and ``path`` name the endpoint."""

    idempotency_key: str | None = None

    def __init__(self, message: str, *, method: str | None = None, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.method = method
        self.path = path
        self.status = None
        self.code = None
        self.details: list[dict[str, Any]] = []
        self.trace_id = None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:  # picklable (keyword-only args)
        return (_rebuild_plain, (type(self), self.args, dict(self.__dict__)))


class APIConnectionError(_NoAnswer):
    """The service could not be reached (or the connection dropped) after all retries.

    On a submit, ``idempotency_key`` names the attempt: the job may exist (see the message).
    """


class APITimeoutError(APIConnectionError, TimeoutError):
    """The request timed out after all retries.

    ``held_by_limit``: the key's rate limit held the request, or refused it with a 429, for
    the whole time, so the service acted on none of its attempts: it made and charged nothing,
    and the same call may simply be made again.
    """

    held_by_limit: bool = False


class UnexpectedResponseError(_NoAnswer):
    """A 2xx answer the client cannot act on: not an object, a required field of the spec
    missing, or a generation status the spec does not name. ``method`` and ``path`` name the
    endpoint; the message says what was wrong. Never retried: the service answered, but not
    as the spec says (a wrong base URL, a proxy, or a service out of step with the client).
    """

    def __init__(self, message: str, *, method: str | None = None, path: str | None = None):
        shown = f"{method} {path}: {message}" if method and path else message
        super().__init__(shown, method=method, path=path)


def _rebuild_plain(cls: type[Exception], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class WaitTimeoutError(MediagenError, TimeoutError):
    """``wait()`` gave up; the job is still pending and may still complete (and be charged).

    Never raised after a resubmit: waiting only reads. ``generation_id`` names the job.
    """

    def __init__(self, generation_id: str, timeout: float | None, last: Any = None) -> None:
        self.generation_id = generation_id
        self.timeout = timeout
        self.generation = last
        if getattr(last, "status", None) == "completed":
            state = (
                f"Generation {generation_id} completed, but its outputs were not downloaded "
                f"within {timeout:g} s; nothing was resubmitted. Get them with"
            )
        else:
            state = (
                f"Generation {generation_id} is still pending after {timeout:g} s. It may still "
                "complete and be charged; nothing was resubmitted. Wait again with"
            )
        super().__init__(f"{state} client.generations.wait({generation_id!r}).")


def unanswered_submit(error: Any, idempotency_key: str) -> Any:
    """``error`` (a connection failure or 5xx on a submit) saying how to recover the job."""
    found = copy.copy(error)
    found.idempotency_key = idempotency_key
    found.message = f"{error.message}. {_recovery_hint(idempotency_key)}"
    found.args = (found.message,)
    return found


def _recovery_hint(key: str) -> str:
    return (
        "The service may have created (and charged) this job. Nothing is charged twice: "
        f"client.generations.resend({key!r}), or the same call with idempotency_key={key!r}, "
        "sends it again with its key and gets the original job back (with its journal on, the "
        "client does that by itself for the same call); "
        "client.generations.recover() looks it up without submitting."
    )


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (a kernel interrupt) stopped a client call; the message says what is left."""

    __module__ = "mediagen"


class WaitInterrupted(Interrupted):
    """An interrupt stopped ``wait()`` (or ``watch()``): the jobs keep running and were not
    resubmitted. ``generation_ids`` lists every job that was still being waited for."""

    __module__ = "mediagen"

    def __init__(
        self, generation_id: str, generation: Any = None, others: Sequence[str] = ()
    ) -> None:
        self.generation_id = generation_id
        self.generation = generation
        self.generation_ids = [generation_id, *(g for g in others if g != generation_id)]
        status = getattr(generation, "status", None)
        if len(self.generation_ids) > 1:
            shown = ", ".join(self.generation_ids[:5])
            more = len(self.generation_ids) - 5
            text = (
                f"Stopped watching generations {shown}{f' (and {more} more)' if more > 0 else ''}."
                " They keep running at the service and were not resubmitted; each is charged "
                "only if it completes. Resume with client.generations.watch(error.generation_ids)"
                " (this exception's generation_ids)."
            )
        else:
            seen = f" (last seen {status})" if status else ""
            state = (
                "It had finished; nothing was resubmitted."
                if status in ("completed", "failed")
                else "The job keeps running at the service and was not resubmitted; it is "
                "charged only if it completes."
            )
            text = (
                f"Stopped waiting for generation {generation_id}{seen}. {state} "
                f"Resume with client.generations.wait({generation_id!r})."
            )
        super().__init__(text)


class SubmitInterrupted(Interrupted):
    """An interrupt stopped a submit before its answer arrived: the job may exist."""

    __module__ = "mediagen"

    def __init__(self, idempotency_key: str) -> None:
        self.idempotency_key = idempotency_key
        hint = _recovery_hint(idempotency_key)
        super().__init__(f"Interrupted before the service answered. {hint}")


class GenerationFailedError(MediagenError):
    """A generation ended ``failed`` (raised by ``Generation.raise_for_error()`` on request).

    Its reserved credits were returned. ``code`` is one of the spec's GenerationError codes;
    ``generation.error`` is the :class:`GenerationErrorInfo` it came from.
    """

    def __init__(self, generation: Any) -> None:
        error = getattr(generation, "error", None)
        self.generation = generation
        self.generation_id = getattr(generation, "id", None)
        self.code = getattr(error, "code", None)
        self.message = getattr(error, "message", None) or "the generation failed"
        self.status = None
        self.details: list[dict[str, Any]] = []
        self.trace_id = None
        super().__init__(
            f"Generation {self.generation_id} failed [{self.code}]: {self.message} "
            "(its reserved credits were returned)"
        )


class BudgetExceededError(MediagenError):
    """A submit was refused locally: its estimate is more than what is left of the budget."""

    def __init__(self, needed: float, remaining: float, limit: float) -> None:
        self.needed = needed
        self.remaining = remaining
        self.limit = limit
        super().__init__(
            f"This request would cost {needed:g} credits but only {remaining:g} of the "
            f"budget of {limit:g} are left; nothing was sent."
        )


#: Names of earlier releases, still answered (with a DeprecationWarning) by the packages'
#: ``__getattr__``: one name per exception, the ecosystem's ``...Error`` form.
DEPRECATED_NAMES = {
    "PaymentRequired": "PaymentRequiredError",
    "PermissionDenied": "PermissionDeniedError",
    "NotFound": "NotFoundError",
    "Conflict": "ConflictError",
    "RateLimited": "RateLimitError",
    "BudgetExceeded": "BudgetExceededError",
    "WaitTimeout": "WaitTimeoutError",
    "GenerationFailed": "GenerationFailedError",
    # the failure's data model, named so it does not read as an exception
    "GenerationError": "GenerationErrorInfo",
}


def deprecated_name(module: str, name: str) -> type:
    """The class an old name stands for, as the asking package ``module`` exports it, with a
    warning naming the one to use."""
    import sys
    import warnings

    new = DEPRECATED_NAMES[name]
    warnings.warn(
        f"{module}.{name} is {module}.{new}; the old name will be removed",
        DeprecationWarning,
        stacklevel=3,
    )
    found: type = getattr(sys.modules[module], new)
    return found


STATUS_ERRORS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: RateLimitError,
}
CODE_ERRORS: dict[str, type[APIError]] = {
    "unauthenticated": AuthenticationError,
    "invalid_api_key": AuthenticationError,
    "payment_required": PaymentRequiredError,
    "forbidden": PermissionDeniedError,
    "api_key_scope": PermissionDeniedError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "validation_error": ValidationError,
    "rate_limited": RateLimitError,
    "internal_error": ServerError,
}


def error_class(status: int, code: str | None) -> type[APIError]:
    """The exception class for a status (the status wins; the code decides unknown statuses)."""
    if status >= 500:
        return ServerError
    found = STATUS_ERRORS.get(status)
    if found is not None:
        return found
    if code and code in CODE_ERRORS:
        return CODE_ERRORS[code]
    return BadRequestError


# =================================================================================================
# Masking secrets in text that came from elsewhere (error bodies, journal values).
#
# A server or a proxy may echo the request's headers in an error body. Whatever the client
# shows of such text (exception messages and reprs, ``details``, the decoded body, log lines,
# the journal) goes through :func:`redact` first: the known secrets are replaced, and so is
# anything that looks like a credential header value, whoever's it is.
# =================================================================================================

MASK = "***"

# ``Authorization: Bearer abc``, ``"authorization": "Bearer abc"``, ``X-Api-Key=abc`` ...
_CREDENTIAL_FIELD = re.compile(
    r"""(?ix)
    ( (?:proxy-)?authorization | x-api-key | api[_-]?key )
    ( ["']? \s* [:=] \s* ["']? )
    ( (?:bearer|basic|token) \s+ )?
    [^\s"',;}\]]+
    """
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret in ``secrets`` and every credential-looking value masked."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    text = _CREDENTIAL_FIELD.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{MASK}", text)
    return _BEARER.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)


def redact_bytes(data: bytes, secrets: Iterable[str] = ()) -> bytes:
    """The same for a raw body, before anything decodes it."""
    for secret in secrets:
        if secret:
            data = data.replace(secret.encode(), MASK.encode())
    return data


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A decoded JSON value with every string in it redacted."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {k: redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, secrets) for v in value]
    return value


def shown_url(url: str) -> str:
    """``url`` without the ``user:password@`` part (a proxy or service credential)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = MASK + "@" + host.rsplit("@", 1)[1]
    return f"{scheme}{sep}{host}{slash}{path}"

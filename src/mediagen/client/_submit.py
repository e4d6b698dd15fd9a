"""Submitting a generation, written once for both drivers: check the fields, resolve
reference inputs (uploading local files), validate against the catalog, quote, reserve the
budget, journal, POST, journal. A lost answer keeps its idempotency key and budget share, so
sending the same request again is charged at most once."""

from __future__ import annotations

import difflib
import hashlib
import io
import logging
import mimetypes
import os
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from mediagen.client import _requests
from mediagen.client._budget import Budget, active_budgets
from mediagen.client._effects import Call, ClientCore, Flow, Put
from mediagen.client._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    LocalValidationError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    ServerError,
    SubmitInterrupted,
    UnexpectedResponseError,
    UnknownFieldError,
    unanswered_submit,
)
from mediagen.client._models import (
    Asset,
    Credits,
    Estimate,
    Generation,
    GenerationOutput,
    ModelInfo,
    UploadTicket,
)
from mediagen.local._journal import canonical
from mediagen.wire import _names as _wire

# =================================================================================================
# Upload sources (a path, bytes, or a file object) and the register-then-PUT flow.
#
# The bytes are streamed in chunks (constant memory for a file of any size) with exactly the
# ``required_headers`` of the registration; the API key is never sent to the upload URL. A
# ticket that expired (its ``expires_at`` passed, or the upload URL answers 403) is registered
# again, once.
# =================================================================================================

CHUNK = 1 << 20


@dataclass
class Source:
    """What to upload: exactly one of ``path``, ``data`` or ``file``."""

    filename: str
    content_type: str
    size: int
    path: Path | None = None
    data: bytes | None = None
    file: BinaryIO | None = None
    start: int = 0  # position of a file object when given (rewound to it on a retry)

    def chunks(self) -> Iterator[bytes]:
        if self.data is not None:
            yield self.data
            return
        if self.path is not None:
            with open(self.path, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    yield chunk
            return
        assert self.file is not None
        if self.file.seekable():
            self.file.seek(self.start)
        remaining = self.size
        while remaining > 0 and (chunk := self.file.read(min(CHUNK, remaining))):
            remaining -= len(chunk)
            yield chunk

    async def achunks(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks():
            yield chunk

    def content(self) -> Any:
        return self.data if self.data is not None else self.chunks()

    def acontent(self) -> Any:
        return self.data if self.data is not None else self.achunks()


def guess_content_type(filename: str) -> str | None:
    suffix = Path(filename).suffix.lower()
    if suffix in _wire.SUFFIX_CONTENT_TYPES:
        return _wire.SUFFIX_CONTENT_TYPES[suffix]
    return mimetypes.guess_type(filename)[0]


def make_source(
    source: Any, filename: str | None = None, content_type: str | None = None
) -> Source:
    """A :class:`Source` from a path (str / PathLike), bytes, or a binary file object."""
    path = data = file = None
    start = 0
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        size = len(data)
        if filename is None:
            if content_type is None:
                raise ValueError("uploading bytes needs filename= or content_type=")
            filename = "upload" + _wire.CONTENT_TYPE_SUFFIXES.get(content_type, "")
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"no such file to upload: {path}")
        size = path.stat().st_size
        filename = filename or path.name
    elif hasattr(source, "read"):
        file = source
        name = getattr(source, "name", None)
        if filename is None and isinstance(name, str):
            filename = os.path.basename(name)
        if isinstance(source, io.BytesIO):
            start = source.tell()
            size = len(source.getbuffer()) - start
        else:
            try:
                start = source.tell()
                size = os.fstat(source.fileno()).st_size - start
            except (OSError, AttributeError, io.UnsupportedOperation):
                data = source.read()
                file = None
                size = len(data)
        if filename is None:
            if content_type is None:
                raise ValueError("uploading a file object needs filename= or content_type=")
            filename = "upload" + _wire.CONTENT_TYPE_SUFFIXES.get(content_type, "")
    else:
        raise TypeError(
            f"upload a path, bytes or a binary file object, not {type(source).__name__}"
        )
    content_type = content_type or guess_content_type(filename)
    if not content_type:
        raise ValueError(
            f"cannot tell the content type of {filename!r}; pass content_type= "
            f"(one of {', '.join(_wire.UPLOAD_CONTENT_TYPES)})"
        )
    if size <= 0:
        raise ValueError("cannot upload an empty file")
    return Source(filename, content_type, size, path=path, data=data, file=file, start=start)


def register(
    client: ClientCore, filename: str, content_type: str, size_bytes: int
) -> Flow[UploadTicket]:
    data = yield Call(_requests.register_upload(filename, content_type, size_bytes))
    return UploadTicket.from_dict(data)


def upload(client: ClientCore, source: Source, ticket: UploadTicket | None = None) -> Flow[Asset]:
    """Flow: register (unless ``ticket`` is given), PUT the bytes, return the ready Asset."""
    if ticket is None or ticket.expired():
        ticket = yield from register(client, source.filename, source.content_type, source.size)
    registered_again = False
    while True:
        try:
            data = yield Put(str(ticket.upload_url), dict(ticket.required_headers), source)
        except PermissionDeniedError:
            # A 403 from the upload URL means its signature no longer holds (expired, or the
            # clocks disagree): a fresh ticket fixes that; the message is not read (it is not
            # meant for parsing). Once only: a second refusal is the answer.
            if registered_again:
                raise
            ticket = yield from register(client, source.filename, source.content_type, source.size)
            registered_again = True
            continue
        break
    merged = {
        "media_type": ticket.media_type,
        "content_type": source.content_type,
        "filename": source.filename,
        **(data or {}),
    }
    merged.setdefault("asset_id", ticket.asset_id)
    return Asset.from_dict(merged)


log = logging.getLogger("mediagen")


#: a derived key starts with this, so a key in the service's history reads as a table row's
DERIVED_PREFIX = "mgrow-"


def new_idempotency_key(derived_from: str | None = None) -> str:
    """The one place keys are made. Random for a call (its retries reuse it, so a retry never
    charges twice); with ``derived_from``, the same text gives the same key in any process, on
    any machine, after any restart (a table row's run, label and request: re-running it is
    free). Either fits the service's limit of 128 non-whitespace characters."""
    if derived_from is None:
        return f"mg-{uuid.uuid4()}"
    return DERIVED_PREFIX + hashlib.sha256(derived_from.encode("utf-8")).hexdigest()


class _HeldBudgets:
    """Budget shares of submits whose answer was lost, by idempotency key (this process).

    The job may exist, so its share stays counted; the re-send that reuses the key takes the
    share over instead of counting the same job twice.
    """

    def __init__(self) -> None:
        self._held: dict[str, tuple[list[Budget], float | None]] = {}
        self._lock = threading.Lock()

    def keep(self, key: str, taken: list[Budget], price: float | None) -> None:
        if taken:
            with self._lock:
                self._held[key] = (taken, price)

    def take(self, key: str) -> tuple[list[Budget], float | None] | None:
        with self._lock:
            return self._held.pop(key, None)


_held_budgets = _HeldBudgets()


def check_fields(kind: str, fields: Mapping[str, Any]) -> None:
    """Reject keyword arguments no submit endpoint of the spec knows (nothing is sent)."""
    known = _wire.SUBMIT_FIELDS[kind]
    unknown = [name for name in fields if name not in known]
    if not unknown:
        return
    details = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        details.append(
            {
                "loc": ["body", name],
                "msg": f"unknown field for {_wire.SUBMIT_PATHS[kind]}{hint} "
                "(pass extra_body={...} to send it anyway)",
                "type": "extra_forbidden",
            }
        )
    names = ", ".join(repr(n) for n in unknown)
    raise UnknownFieldError(
        f"unknown field(s) {names} for {kind} generation", code="validation_error",
        details=details,
    )  # fmt: skip


def _is_local_path(value: Any) -> bool:
    if isinstance(value, Path):
        return True
    if isinstance(value, str) and not value.startswith(_wire.ASSET_ID_PREFIX):
        return ("/" in value or os.sep in value or "." in value) and os.path.isfile(value)
    return False


def resolve_reference(client: ClientCore, value: Any) -> Flow[Any]:
    """Flow: an asset id from an id, an Asset, a GenerationOutput, or a local path (uploaded)."""
    if isinstance(value, Asset):
        return value.asset_id
    if isinstance(value, GenerationOutput):
        if not value.asset_id:
            raise ValueError("this output has no asset_id to use as a reference")
        return value.asset_id
    if isinstance(value, UploadTicket):
        return value.asset_id
    if _is_local_path(value):
        asset = yield from upload(client, make_source(value))
        return asset.asset_id
    return value


def map_references(body: dict[str, Any], fn: Callable[[Any], Flow[Any]]) -> Flow[dict[str, Any]]:
    """Flow: ``body`` with every reference input replaced by ``yield from fn(value)``."""
    for name in _wire.ASSET_FIELDS:
        if body.get(name) is not None:
            body[name] = yield from fn(body[name])
    for name in _wire.ASSET_LIST_FIELDS:
        if isinstance(body.get(name), (list, tuple)):
            resolved = []
            for value in body[name]:
                resolved.append((yield from fn(value)))
            body[name] = resolved
    if isinstance(body.get("keyframes"), list):
        frames = []
        for frame in body["keyframes"]:
            if isinstance(frame, Mapping) and frame.get("image") is not None:
                frame = {**frame, "image": (yield from fn(frame["image"]))}
            frames.append(frame)
        body["keyframes"] = frames
    if isinstance(body.get("elements"), list):
        elements = []
        for element in body["elements"]:
            if isinstance(element, Mapping) and isinstance(element.get("images"), list):
                images = []
                for value in element["images"]:
                    images.append((yield from fn(value)))
                element = {**element, "images": images}
            elements.append(element)
        body["elements"] = elements
    return body


def resolve_references(client: ClientCore, body: dict[str, Any]) -> Flow[dict[str, Any]]:
    """Flow: every reference input as an asset id (local files are uploaded)."""
    return (yield from map_references(body, lambda value: resolve_reference(client, value)))


def _identity(value: Any) -> Flow[Any]:
    """Flow (never yields): what a reference input is, without uploading it."""
    yield from ()  # a generator, so map_references can run it
    if _is_local_path(value):
        path = Path(value).expanduser().resolve()
        stat = path.stat()
        return f"file:{path}:{stat.st_size}:{stat.st_mtime_ns}"
    if isinstance(value, (Asset, UploadTicket, GenerationOutput)):
        return value.asset_id
    return value


def local_inputs(
    kind: str, body: dict[str, Any], extra_body: Mapping[str, Any] | None
) -> str | None:
    """For a request with local files among its references: a digest of the request as
    given (each file named by path, size and modification time), else None. It recognizes
    the same request sent again, whose uploads would get new asset ids."""
    flow = map_references(dict(body), _identity)
    try:
        flow.send(None)
    except StopIteration as stop:
        given = stop.value
    else:  # pragma: no cover - _identity never yields
        raise RuntimeError("identity of references must not do I/O")
    if not any(isinstance(v, str) and v.startswith("file:") for v in _flatten(given)):
        return None
    text = canonical({"kind": kind, "body": given, "extra": dict(extra_body or {})})
    return hashlib.sha256(text.encode()).hexdigest()


def _flatten(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _flatten(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _flatten(item)
    else:
        yield value


def get_model(client: ClientCore, model_id: str, refresh: bool = False) -> Flow[ModelInfo]:
    cached = None if refresh else client._models_cache.get(model_id)
    if cached is not None:
        return cached
    info = ModelInfo.from_dict((yield Call(_requests.get_model(model_id))))
    client._models_cache[model_id] = info
    return info


def estimate_for_request(
    client: ClientCore, request: Mapping[str, Any], entry: ModelInfo | None
) -> Flow[Estimate]:
    model = request.get("model")
    if not model:
        raise ValueError("the request has no 'model' to estimate")
    if entry is None:
        entry = yield from get_model(client, model)
    query = entry.catalog.estimate_query(request)
    return Estimate.from_dict((yield Call(_requests.estimate(model, query))))


@dataclass
class _Shares:
    """The budget shares one submit holds: taken all or none, given back on a refusal, kept
    (and handed to the re-send) when the answer is lost."""

    taken: list[Budget]
    price: float | None

    @classmethod
    def reserve(cls, budgets: tuple[Budget, ...], price: float | None) -> _Shares:
        taken: list[Budget] = []
        if budgets and price is not None:
            try:
                for found in budgets:
                    found.reserve(price)
                    taken.append(found)
            except Exception:
                cls(taken, price).release()
                raise
        return cls(taken, price)

    def release(self) -> None:
        if self.price is None:  # nothing was taken without a price
            return
        for found in self.taken:
            found.release(self.price)


def submit(
    client: ClientCore,
    kind: str,
    fields: dict[str, Any],
    *,
    extra_body: Mapping[str, Any] | None,
    extra_headers: Mapping[str, str] | None,
    validate: bool | None,
    estimate: bool | None,
    quote: Estimate | None = None,
    fresh_key: str | None = None,
) -> Flow[Generation[Any]]:
    """Flow: check, resolve references, (estimate), journal, POST, journal.

    Without an ``idempotency_key`` in ``fields``, ``fresh_key`` (or a new one) is used unless
    an identical request's answer was lost: then that attempt's key.

    ``quote`` is an estimate already made for exactly this body (a batch quotes first); it is
    used for the budget instead of asking again.
    """
    check_fields(kind, fields)
    body = {k: v for k, v in fields.items() if v is not None}
    own_key = body.pop("idempotency_key", None)
    key = own_key or fresh_key or new_idempotency_key()
    inputs = None if own_key else local_inputs(kind, body, extra_body)
    lost = client._journal_lost_inputs(kind, inputs) if inputs else None
    if lost is not None:
        # The same request with the same local files, whose answer was lost: send exactly
        # what was sent then (its uploads are at the service), so its key can be reused.
        body, extra_body = dict(lost["request"]), None
    else:
        body = yield from resolve_references(client, body)
    budgets = _budgets(client)
    config = client._config
    validate = config.validate if validate is None else validate
    want_estimate = bool(budgets) or (config.estimate if estimate is None else estimate)
    entry = yield from _checked_entry(client, kind, body, validate, want_estimate)
    if extra_body:
        body.update(extra_body)
    if quote is None and want_estimate and entry is not None:
        quote = yield from estimate_for_request(client, {**body, "idempotency_key": key}, entry)
    shares = _Shares.reserve(budgets, None if quote is None else quote.credits_after_discount)
    if own_key:
        client._journal_event("attempt", kind, body, key, None, quote)
    else:
        key = client._journal_attempt(kind, body, key, quote, inputs)
    held = _held_budgets.take(key)
    if held is not None:  # the lost attempt's share is still counted: count this job once
        shares.release()
        shares = _Shares(*held)
    sent = _Sent(kind, body, key, quote)
    data = yield from _post(client, sent, extra_headers, shares, entry)
    gen = Generation.from_dict(data, client=client)
    client._journal_event("submitted", kind, body, key, gen, quote)
    if gen.id:
        client._note_request(gen.id, body, quote)
    return gen


def _budgets(client: ClientCore) -> tuple[Budget, ...]:
    """The client's own budget, then every ``with mediagen.budget(...)`` active here."""
    found = tuple(active_budgets())
    return found if client._budget is None else (client._budget, *found)


def _checked_entry(
    client: ClientCore, kind: str, body: dict[str, Any], validate: bool, want_estimate: bool
) -> Flow[ModelInfo | None]:
    """Flow: the model's catalog entry when a check or a quote needs it (None for a model the
    service does not know: its answer says what is wrong); a request the entry refuses is
    raised here, before anything is sent."""
    model = body.get("model")
    if not (validate or want_estimate) or not isinstance(model, str) or not model:
        return None
    try:
        entry = yield from get_model(client, model)
    except NotFoundError:
        return None
    problems = entry.catalog.validate(body, kind=kind) if validate else []
    if problems:
        raise LocalValidationError(
            f"invalid request for model {model!r} (nothing was sent)",
            code="validation_error",
            details=problems,
        )
    return entry


@dataclass(frozen=True)
class _Sent:
    """What a submit sends and journals."""

    kind: str
    body: dict[str, Any]
    key: str
    quote: Estimate | None


def _unanswered(client: ClientCore, sent: _Sent, shares: _Shares, exc: Exception) -> Exception:
    """The outcome is unknown: the job may exist (an answer the client cannot read may still
    be the service's). Keep the budget's share, journal the attempt, say how to recover."""
    _held_budgets.keep(sent.key, shares.taken, shares.price)
    client._journal_event("unanswered", sent.kind, sent.body, sent.key, None, sent.quote)
    return unanswered_submit(exc, sent.key)


def _post(
    client: ClientCore,
    sent: _Sent,
    extra_headers: Mapping[str, str] | None,
    shares: _Shares,
    entry: ModelInfo | None,
) -> Flow[Any]:
    """Flow: the POST itself. A refusal gives the budget shares back; a lost answer (the job
    may exist) keeps them for the re-send and journals the attempt as unanswered."""
    kind, body, key, quote = sent.kind, sent.body, sent.key, sent.quote
    try:
        return (yield Call(_requests.submit(kind, body, key, extra_headers)))
    except APITimeoutError as exc:
        if not exc.held_by_limit:
            raise _unanswered(client, sent, shares, exc) from None
        shares.release()  # the rate limit held or refused every attempt: nothing to recover
        raise
    except (APIConnectionError, ServerError, UnexpectedResponseError) as exc:
        raise _unanswered(client, sent, shares, exc) from None
    except APIError as exc:
        shares.release()
        if isinstance(exc, PaymentRequiredError):
            yield from explain_refusal(client, exc, body, quote, entry)
        raise
    except BaseException as exc:  # an interrupt, a cancelled task: the answer is lost too
        _held_budgets.keep(key, shares.taken, shares.price)
        client._journal_event("unanswered", kind, body, key, None, quote)
        if isinstance(exc, KeyboardInterrupt):
            raise SubmitInterrupted(key) from None
        raise


def explain_refusal(client: ClientCore, error: PaymentRequiredError, body: dict[str, Any],
                    quote: Estimate | None, entry: ModelInfo | None) -> Flow[None]:  # fmt: skip
    """Flow: fill ``required`` / ``available`` of a 402 the service sent without them, from the
    estimate and the balance (the message is for people, not for parsing); left None if they
    cannot be read."""
    try:
        if error.required is None:
            if quote is None and isinstance(body.get("model"), str):
                quote = yield from estimate_for_request(client, body, entry)
            if quote is not None:
                error.required = quote.credits_after_discount
        if error.available is None:
            error.available = (yield from read_credits(client)).balance
    except Exception as exc:  # best effort: the refusal itself is what is raised
        log.info("mediagen: could not read the price and balance of a refused submit: %s", exc)


def read_credits(client: ClientCore) -> Flow[Credits]:
    return Credits.from_dict((yield Call(_requests.credits())))

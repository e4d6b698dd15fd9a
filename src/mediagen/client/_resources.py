"""The resources (``client.videos``, ``.generations``, ``.models`` ...), written once.

Each public method builds a flow (a generator of effects, see ``_effects``) and hands it to
``client._run`` (one result) or ``client._iterate`` (many). ``Client`` runs flows with blocking
I/O and returns values; ``AsyncClient`` runs them with ``await`` and returns awaitables /
async iterators. So ``client.images.create(...)`` and ``await aclient.images.create(...)``
share every line of logic.
"""

from __future__ import annotations

import builtins
import datetime as dt
import difflib
import hashlib
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from mediagen.client import _progress_hook, _requests, _uploads, _wait, _wire
from mediagen.client._budget import active_budgets
from mediagen.client._effects import Call, Emit
from mediagen.client._errors import (
    APIConnectionError,
    APIError,
    LocalValidationError,
    NotFoundError,
    PaymentRequiredError,
    ServerError,
    SubmitInterrupted,
    UnknownFieldError,
    WaitInterrupted,
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
    parse_datetime,
)
from mediagen.journal import canonical

_NOT_GIVEN: Any = object()
log = logging.getLogger("mediagen")


def new_idempotency_key() -> str:
    return f"mg-{uuid.uuid4()}"


class _Resource:
    def __init__(self, client: Any) -> None:
        self._client = client

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self._client!r}>"


# --- submit -------------------------------------------------------------------------------


class _HeldBudgets:
    """Budget shares of submits whose answer was lost, by idempotency key (this process).

    The job may exist, so its share stays counted; the re-send that reuses the key takes the
    share over instead of counting the same job twice.
    """

    def __init__(self) -> None:
        self._held: dict[str, tuple[list[Any], float | None]] = {}
        self._lock = threading.Lock()

    def keep(self, key: str, taken: list[Any], price: float | None) -> None:
        if taken:
            with self._lock:
                self._held[key] = (taken, price)

    def take(self, key: str) -> tuple[list[Any], float | None] | None:
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


def resolve_reference(client: Any, value: Any):
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
        asset = yield from _uploads.upload(client, _uploads.make_source(value))
        return asset.asset_id
    return value


def map_references(body: dict[str, Any], fn: Callable[[Any], Any]):
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


def resolve_references(client: Any, body: dict[str, Any]):
    """Flow: every reference input as an asset id (local files are uploaded)."""
    return (yield from map_references(body, lambda value: resolve_reference(client, value)))


def _identity(value: Any):
    """Flow (never yields): what a reference input is, without uploading it."""
    if _is_local_path(value):
        path = Path(value).expanduser().resolve()
        stat = path.stat()
        return f"file:{path}:{stat.st_size}:{stat.st_mtime_ns}"
    if isinstance(value, (Asset, UploadTicket, GenerationOutput)):
        return value.asset_id
    return value
    yield  # a generator, so map_references can run it


def local_inputs(kind: str, body: dict[str, Any], extra_body: Mapping[str, Any] | None):
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


def _flatten(value: Any):
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _flatten(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _flatten(item)
    else:
        yield value


def get_model(client: Any, model_id: str, refresh: bool = False):
    cached = None if refresh else client._models_cache.get(model_id)
    if cached is not None:
        return cached
    info = ModelInfo.from_dict((yield Call(_requests.get_model(model_id))))
    client._models_cache[model_id] = info
    return info


def estimate_for_request(client: Any, request: Mapping[str, Any], entry: ModelInfo | None):
    model = request.get("model")
    if not model:
        raise ValueError("the request has no 'model' to estimate")
    if entry is None:
        entry = yield from get_model(client, model)
    query = entry.catalog.estimate_query(request)
    return Estimate.from_dict((yield Call(_requests.estimate(model, query))))


def submit(
    client: Any,
    kind: str,
    fields: dict[str, Any],
    *,
    extra_body: Mapping[str, Any] | None,
    extra_headers: Mapping[str, str] | None,
    validate: bool | None,
    estimate: bool | None,
    quote: Estimate | None = None,
    fresh_key: str | None = None,
):
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
    config = client._config
    budgets = tuple(active_budgets())
    if client._budget is not None:
        budgets = (client._budget, *budgets)
    validate = config.validate if validate is None else validate
    want_estimate = bool(budgets) or (config.estimate if estimate is None else estimate)
    entry = None
    model = body.get("model")
    if (validate or want_estimate) and isinstance(model, str) and model:
        try:
            entry = yield from get_model(client, model)
        except NotFoundError:
            entry = None  # the service will say what is wrong with the model id
    if validate and entry is not None:
        problems = entry.catalog.validate(body, kind=kind)
        if problems:
            raise LocalValidationError(
                f"invalid request for model {model!r} (nothing was sent)",
                code="validation_error",
                details=problems,
            )
    if extra_body:
        body.update(extra_body)
    if quote is None and want_estimate and entry is not None:
        quote = yield from estimate_for_request(client, {**body, "idempotency_key": key}, entry)
    taken: list[Any] = []
    price = quote.credits_after_discount if quote is not None else None
    if budgets and price is not None:
        try:
            for found in budgets:
                found.reserve(price)
                taken.append(found)
        except Exception:
            for found in taken:
                found.release(price)
            raise
    if own_key:
        client._journal_event("attempt", kind, body, key, None, quote)
    else:
        key = client._journal_attempt(kind, body, key, quote, inputs)
    held = _held_budgets.take(key)
    if held is not None:  # the lost attempt's share is still counted: count this job once
        for found in taken:
            found.release(price)
        taken, price = held
    try:
        data = yield Call(_requests.submit(kind, body, key, extra_headers))
    except (APIConnectionError, ServerError) as exc:
        # The outcome is unknown: the job may exist. Keep the budget's share, say how to recover.
        _held_budgets.keep(key, taken, price)
        client._journal_event("unanswered", kind, body, key, None, quote)
        raise unanswered_submit(exc, key) from None
    except APIError as exc:
        for found in taken:
            found.release(price)
        if isinstance(exc, PaymentRequiredError):
            yield from explain_refusal(client, exc, body, quote, entry)
        raise
    except BaseException as exc:  # an interrupt, a cancelled task: the answer is lost too
        _held_budgets.keep(key, taken, price)
        client._journal_event("unanswered", kind, body, key, None, quote)
        if isinstance(exc, KeyboardInterrupt):
            raise SubmitInterrupted(key) from None
        raise
    gen = Generation.from_dict(data, client=client)
    client._journal_event("submitted", kind, body, key, gen, quote)
    return gen


def explain_refusal(client: Any, error: PaymentRequiredError, body: dict[str, Any],
                    quote: Estimate | None, entry: ModelInfo | None):  # fmt: skip
    """Flow: fill ``needed`` / ``available`` of a 402 from the estimate and the balance (the
    message is for people, not for parsing); left None if they cannot be read."""
    try:
        if quote is None and isinstance(body.get("model"), str):
            quote = yield from estimate_for_request(client, body, entry)
        if quote is not None:
            error.needed = quote.credits_after_discount
        error.available = (yield from _credits(client)).balance
    except Exception as exc:  # best effort: the refusal itself is what is raised
        log.info("mediagen: could not read the price and balance of a refused submit: %s", exc)


class _Create(_Resource):
    _kind = ""

    def create(
        self,
        *,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        validate: bool | None = None,
        estimate: bool | None = None,
        **fields: Any,
    ) -> Any:
        """Submit a generation; returns it ``pending`` (``.wait()`` for the result).

        Fields are the spec's body fields as keyword arguments; an unknown one raises
        :class:`UnknownFieldError` (send it anyway with ``extra_body={...}``). Reference
        inputs take an asset id, an ``Asset``, a ``GenerationOutput`` or a local path
        (uploaded first). The request is checked against the model's catalog entry before
        sending (``validate=False`` skips that). An ``idempotency_key`` is made when none is
        given, and reused on every retry, so a retry can never charge twice.
        """
        flow = submit(
            self._client,
            self._kind,
            fields,
            extra_body=extra_body,
            extra_headers=extra_headers,
            validate=validate,
            estimate=estimate,
        )
        __tracebackhide__ = True  # IPython and pytest show the caller's line, not ours
        try:
            return self._client._run(flow)
        except SubmitInterrupted as exc:  # the message says all; the flow's frames do not help
            raise exc.with_traceback(None) from None


class Videos(_Create):
    """``POST /v1/videos``."""

    _kind = "video"


class Images(_Create):
    """``POST /v1/images``."""

    _kind = "image"


class Audio(_Create):
    """``POST /v1/audio`` (speech or music: the model decides)."""

    _kind = "audio"


# --- generations --------------------------------------------------------------------------


def _get(client: Any, generation_id: str):
    data = yield Call(_requests.get_generation(generation_id))
    return Generation.from_dict(data, client=client)


def _page(client: Any, query: Mapping[str, Any]):
    return (yield Call(_requests.list_generations(**query)))


def _list(client: Any, query: dict[str, Any], max_items: int | None):
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


def _fetch_many(client: Any, ids: Iterable[str]):
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


def _recover(client: Any):
    """Flow: find, by idempotency key, the jobs of submits whose answer was lost (read only)."""
    lost = {r["idempotency_key"]: r for r in client._journal_unanswered()}
    if not lost:
        return []
    times = [parse_datetime(r.get("at")) for r in lost.values()]
    known = [t for t in times if t is not None]
    since = min(known) - RECOVER_CLOCK_SLACK if len(known) == len(times) else None
    found = []
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


def _resume(client: Any, wait: bool, download: bool):
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


def _short_interrupts(items: Any):
    """``items``, with an interruption raised from here: its message says what is left, the
    frames of the flow and driver would not help."""
    __tracebackhide__ = True
    try:
        yield from items
    except WaitInterrupted as exc:
        raise exc.with_traceback(None) from None


class GenerationList:
    """Every generation matching the filters, following cursors (iterate it)."""

    def __init__(self, resource: Generations, query: dict[str, Any], max_items: int | None):
        self._resource = resource
        self._query = query
        self._max_items = max_items

    def __iter__(self):
        client = self._resource._client
        return iter(client._iterate(_list(client, dict(self._query), self._max_items)))

    def __aiter__(self):
        client = self._resource._client
        return client._iterate(_list(client, dict(self._query), self._max_items)).__aiter__()

    def to_dataframe(self, **options: Any) -> Any:
        filters = {k: v for k, v in self._query.items() if k not in ("limit", "after")}
        return self._resource.to_dataframe(**filters, **options)

    def __repr__(self) -> str:
        return f"GenerationList({self._query!r})"


class Generations(_Resource):
    """``GET /v1/generations[/{id}]`` plus waiting, watching and resuming."""

    def get(self, generation_id: str) -> Any:
        """One generation's current state."""
        return self._client._run(_get(self._client, _wait.generation_id(generation_id)))

    def list(
        self,
        *,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
        limit: int | None = None,
        max_items: int | None = None,
    ) -> GenerationList:
        """Iterate every matching generation, newest first (cursors followed for you).

        ``limit`` is the page size (default 100, the maximum); ``max_items`` stops early.
        Async: ``async for g in aclient.generations.list(...)``.
        """
        query = {
            "status": status,
            "type": type,
            "model": model,
            "created_after": created_after,
            "limit": limit or _wire.PAGE_SIZE_MAX,
        }
        return GenerationList(self, {k: v for k, v in query.items() if v is not None}, max_items)

    def _list_page_raw(
        self,
        *,
        limit: int | None = None,
        after: str | None = None,
        status: str | None = None,
        type: str | None = None,
        model: str | None = None,
        created_after: Any = None,
    ) -> Any:
        """One page of ``GET /v1/generations`` as the service sent it (thread-safe)."""
        query = {
            "limit": limit,
            "after": after,
            "status": status,
            "type": type,
            "model": model,
            "created_after": created_after,
        }
        return self._client._run(_page(self._client, query))

    def wait(
        self,
        generation: Any,
        timeout: float | None = None,
        *,
        on_update: Callable[[Generation], Any] | None = None,
        progress: Callable[[Generation], Any] | None = None,
        poll_interval: Any = None,
        download: bool | None = None,
    ) -> Any:
        """Poll until ``completed`` or ``failed`` and return the final Generation.

        Polls every ``poll_interval`` (client default 2 s backing off to 5 s); calls
        ``on_update(generation)`` (alias ``progress``) after each poll. Raises
        :class:`WaitTimeoutError` after ``timeout`` seconds (the job may still complete and
        be charged; nothing is resubmitted). Completed outputs are downloaded into the cache
        (``download=False`` skips that). A failed generation is returned, not raised: call
        ``.raise_for_error()``.
        """
        __tracebackhide__ = True  # IPython and pytest show the caller's line, not ours
        callback = on_update or progress
        gid = _wait.generation_id(generation)
        try:
            if callback is None:
                with _progress_hook.task(f"Waiting for generation {gid}") as bar:
                    if bar is not None:
                        callback = lambda g: bar.update(message=_progress_hook.generation_status(g))  # noqa: E731
                    return self._wait(generation, timeout, callback, poll_interval, download)
            return self._wait(generation, timeout, callback, poll_interval, download)
        except KeyboardInterrupt as exc:
            # A short, clear interruption: the job, that it keeps running, how to resume.
            found = exc if isinstance(exc, WaitInterrupted) else WaitInterrupted(gid)
            raise found.with_traceback(None) from None

    def _wait(self, generation, timeout, callback, poll_interval, download) -> Any:
        from mediagen.client._config import normalize_poll_interval

        config = self._client._config
        flow = _wait.wait(
            self._client,
            generation,
            timeout=timeout,
            on_update=callback,
            poll_interval=(
                config.poll_interval
                if poll_interval is None
                else normalize_poll_interval(poll_interval)
            ),
            download=config.download if download is None else download,
        )
        return self._client._run(flow)

    def watch(
        self,
        generations: Iterable[Any],
        *,
        timeout: float | None = None,
        on_update: Callable[[Generation], Any] | None = None,
        poll_interval: Any = None,
        download: bool | None = None,
    ) -> Any:
        """Yield each generation as it finishes (completion order).

        Costs requests per page of the list endpoint (100 generations a page) per round, not
        one request per job.
        """
        from mediagen.client._config import normalize_poll_interval

        config = self._client._config
        flow = _wait.watch(
            self._client,
            list(generations),
            timeout=timeout,
            on_update=on_update,
            poll_interval=(
                config.poll_interval
                if poll_interval is None
                else normalize_poll_interval(poll_interval)
            ),
            download=config.download if download is None else download,
        )
        found = self._client._iterate(flow)
        return found if hasattr(found, "__anext__") else _short_interrupts(found)

    def pending(self) -> builtins.list[dict[str, Any]]:
        """Journal records of generations this machine submitted that were last seen pending,
        then submits whose answer was lost (``event`` ``"unanswered"``, no ``generation_id``
        yet: :meth:`recover` looks them up)."""
        return self._client._journal_pending() + self._client._journal_unanswered()

    def recover(self) -> Any:
        """Find the jobs of submits whose answer never arrived (a dropped connection, a 5xx,
        an interrupt, a crash), by their idempotency keys; read only, nothing is submitted.

        Returns the generations found (journaled, so ``pending()``/``resume()`` know them). A
        lost submit not found here never reached the service; sending the same request again
        reuses its idempotency key, so it is charged at most once either way.
        """
        return self._client._run(_recover(self._client))

    def resume(self, *, wait: bool = False, download: bool | None = None) -> Any:
        """Re-attach after a kernel restart: the current state of every journaled pending job,
        including those of submits whose answer was lost (:meth:`recover` runs first).

        Finished ones are journaled (and downloaded); ``wait=True`` also waits for the rest.
        """
        config = self._client._config
        return self._client._run(
            _resume(self._client, wait, config.download if download is None else download)
        )

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
    ) -> Any:
        """All matching generations as a pandas DataFrame, newest first (``mediagen.history``).

        The filters are the list endpoint's: ``status``, ``type``, ``model`` and
        ``created_after`` (an aware datetime, a date or an ISO string; strictly after).

        By default the rows come from the local history store (``mediagen.history.HistoryStore``,
        under the client's cache folder): a sync first fetches only what was created since the
        last one, plus what was still pending. ``sync=False`` answers from the store without
        asking the service (offline); ``rebuild=True`` forgets the store and fetches everything
        again; ``store=False`` fetches the matching generations directly and keeps nothing.
        """
        from mediagen.history import generations_frame, stored_frame

        filters = {"status": status, "type": type, "model": model, "created_after": created_after}
        with _progress_hook.task("Fetching history", "page") as bar:
            on_page = None
            if bar is not None:
                rows = [0]

                def on_page(page: Mapping[str, Any]) -> None:
                    rows[0] += len(page.get("data") or [])
                    bar.advance(message=f"{rows[0]} generations")

            client = self._client._sync_twin()
            if not store:
                return generations_frame(client, on_page=on_page, **filters)
            return stored_frame(client, sync=sync, rebuild=rebuild, on_page=on_page, **filters)


# --- models, credits, uploads -------------------------------------------------------------


def _list_models(client: Any, type: str | None):
    data = yield Call(_requests.list_models(type))
    models = [ModelInfo.from_dict(m) for m in _requests.page_items(data or {})]
    for info in models:
        client._models_cache[info.id] = info
    return models


def _estimate(client: Any, model_id: str, query: Mapping[str, Any]):
    return Estimate.from_dict((yield Call(_requests.estimate(model_id, query))))


def _credits(client: Any):
    return Credits.from_dict((yield Call(_requests.credits())))


def _total_estimate(client: Any, requests: list[Mapping[str, Any]]):
    quotes = []
    for request in requests:
        quotes.append((yield from estimate_for_request(client, request, None)))
    return quotes


class Models(_Resource):
    """The catalog: ``GET /v1/models``, ``/v1/models/{id}`` and the estimate endpoint."""

    def list(self, *, type: str | None = None) -> Any:
        """Every model (of ``type``: ``image``, ``video`` or ``audio``) as ``ModelInfo``."""
        return self._client._run(_list_models(self._client, type))

    def get(self, model_id: str, *, refresh: bool = False) -> Any:
        """One catalog entry (cached per client; ``refresh=True`` reads it again)."""
        return self._client._run(get_model(self._client, model_id, refresh))

    def estimate(self, model_id: str, **query: Any) -> Any:
        """``GET /v1/models/{id}/estimate`` with the wire contract's query names."""
        return self._client._run(_estimate(self._client, model_id, query))

    def estimate_request(self, request: Mapping[str, Any]) -> Any:
        """The quote for exactly this submit body (mapped with ``Catalog.estimate_query``)."""
        return self._client._run(estimate_for_request(self._client, dict(request), None))

    def estimate_many(self, requests: Iterable[Mapping[str, Any]]) -> Any:
        """One quote per request (for showing a batch's total before submitting it)."""
        return self._client._run(_total_estimate(self._client, [dict(r) for r in requests]))


class CreditsResource(_Resource):
    """``GET /v1/credits``."""

    def get(self) -> Any:
        return self._client._run(_credits(self._client))


class Uploads(_Resource):
    """``POST /v1/uploads`` then a streamed PUT of the bytes to the signed URL."""

    def create(self, *, filename: str, content_type: str, size_bytes: int) -> Any:
        """Register a file; returns the ``UploadTicket`` (``upload_url``, headers, expiry)."""
        return self._client._run(
            _uploads.register(self._client, filename, content_type, size_bytes)
        )

    def upload(
        self,
        source: Any,
        *,
        filename: str | None = None,
        content_type: str | None = None,
        ticket: UploadTicket | None = None,
    ) -> Any:
        """Upload a path, bytes or binary file object; returns the ready ``Asset``.

        Streams in 1 MiB chunks with exactly the ticket's ``required_headers`` (never the API
        key); an expired ticket is registered again.
        """
        made = _uploads.make_source(source, filename, content_type)
        return self._client._run(_uploads.upload(self._client, made, ticket))

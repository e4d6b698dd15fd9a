"""Typed, tolerant models of the service's JSON (plain dataclasses: cheap to import).

The API is additive-only, so every model keeps the JSON it was made from (``raw``, also
``to_dict()``) and the fields it does not know (``extra``); an unknown field is never an error.
Datetimes are timezone-aware (``datetime`` in UTC when the service says ``Z``).

Models that can act (``Generation.wait()``, ``GenerationOutput.download()``) hold a private
reference to the client that made them, and name it in their type: a ``Client`` returns
``Generation`` (short for ``Generation[Client]``), whose methods return their values; an
``AsyncClient`` returns ``Generation[AsyncClient]``, whose methods return coroutines to await.
Editors and type checkers see which, from the client the model came from. The models are
generic over the protocols of ``_effects`` rather than the clients above them; ``_clients`` binds
the public names to ``Client``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, overload

from typing_extensions import Self, TypeVar

# the widgets and the magics import the accessors from here too

if TYPE_CHECKING:
    from mediagen.client._effects import AwaitingT, BlockingClient, BlockingT, ClientCore
    from mediagen.pricing.catalog import Catalog

TERMINAL_STATUSES = ("completed", "failed")

#: the client a generation (and its outputs) acts through; here a bare ``Generation`` is a
#: blocking client's (the public ``mediagen.Generation`` is ``Client``'s: see ``_clients``)
ClientT = TypeVar("ClientT", default="BlockingClient")


def parse_datetime(value: Any) -> dt.datetime | None:
    """ISO 8601 text -> aware datetime (naive input is taken as UTC); None stays None."""
    if value is None or isinstance(value, dt.datetime):
        if isinstance(value, dt.datetime) and value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)
        return value
    text = str(value).strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    return parsed


def _float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


@dataclasses.dataclass(repr=False, eq=False)
class _Model:
    """Base: ``from_dict`` keeps unknown fields; ``to_dict`` gives the service's JSON back."""

    raw: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    _converters: ClassVar[dict[str, Any]] = {}
    _shown: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, **bind: Any) -> Self:
        """Build the model from the service's JSON object; fields the client does not know are kept
        in ``extra``."""
        data = dict(data or {})
        names = {f.name for f in dataclasses.fields(cls) if f.init} - {"raw"}
        values: dict[str, Any] = {}
        for name in names:
            if name in data:
                convert = cls._converters.get(name)
                value = data[name]
                values[name] = convert(value) if convert is not None else value
        obj = cls(raw=data, **values)
        obj._bind(**bind)
        return obj

    def _bind(self, **bind: Any) -> None:
        """Attach the client (models that can act override this)."""

    @property
    def extra(self) -> dict[str, Any]:
        """Fields the service sent that this version of the client does not know."""
        known = {f.name for f in dataclasses.fields(self)}
        return {k: v for k, v in self.raw.items() if k not in known}

    def to_dict(self) -> dict[str, Any]:
        """The JSON object as the service sent it (unknown fields included)."""
        return dict(self.raw)

    def __getitem__(self, name: str) -> Any:
        """``model["field"]`` reads the raw JSON (handy for fields newer than this client)."""
        return self.raw[name]

    def get(self, name: str, default: Any = None) -> Any:
        """A field by name, known or not (``extra``), else ``default``."""
        return self.raw.get(name, default)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.raw == other.raw  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        names = self._shown or tuple(f.name for f in dataclasses.fields(self) if f.name != "raw")
        parts = [f"{n}={getattr(self, n)!r}" for n in names if getattr(self, n, None) is not None]
        return f"{type(self).__name__}({', '.join(parts)})"


# --- generations --------------------------------------------------------------------------


@dataclasses.dataclass(repr=False, eq=False)
class GenerationErrorInfo(_Model):
    """Why a generation failed (the spec's ``GenerationError`` object, data, not an exception):
    ``code`` (one of the spec's nine) and ``message``."""

    code: str | None = None
    message: str | None = None


@dataclasses.dataclass(repr=False, eq=False)
class GenerationOutput(_Model, Generic[ClientT]):
    """One generated file. ``url`` is temporary; ``local_path`` is the cached copy."""

    url: str | None = None
    asset_id: str | None = None
    content_type: str | None = None
    duration_seconds: float | None = None
    width: int | None = None
    height: int | None = None
    filename: str | None = None
    b64_json: str | None = None
    _converters: ClassVar[dict[str, Any]] = {
        "duration_seconds": _float,
        "width": _int,
        "height": _int,
    }
    _shown: ClassVar[tuple[str, ...]] = (
        "asset_id",
        "content_type",
        "width",
        "height",
        "duration_seconds",
    )

    def _bind(
        self,
        client: ClientCore | None = None,
        generation_id: str | None = None,
        generation: Generation[Any] | None = None,
        **_: Any,
    ) -> None:
        self._client = client
        self._generation_id = generation_id
        # what a saved file's content credentials say of it (model, request, charge)
        self._generation = generation

    @property
    def generation(self) -> Generation[Any] | None:
        """The generation this output came from, as last read (None when built without one)."""
        return getattr(self, "_generation", None)

    @property
    def generation_id(self) -> str | None:
        """The id of the generation this output belongs to (None when built without one)."""
        return getattr(self, "_generation_id", None)

    @property
    def local_path(self) -> Path | None:
        """The cached local copy, if it was downloaded (None otherwise; never downloads)."""
        client = getattr(self, "_client", None)
        if client is None:
            return None
        return client._cache.lookup(self)

    @overload
    def download(
        self: GenerationOutput[BlockingT],
        path: str | Path | None = None,
        *,
        timeout: float | None = None,
    ) -> Path: ...
    @overload
    def download(
        self: GenerationOutput[AwaitingT],
        path: str | Path | None = None,
        *,
        timeout: float | None = None,
    ) -> Coroutine[Any, Any, Path]: ...
    def download(
        self, path: str | Path | None = None, *, timeout: float | None = None
    ) -> Path | Coroutine[Any, Any, Path]:
        """Download into the cache (streamed, atomic) and return the local path.

        With ``path`` (a file or a directory) the file is also copied there. An expired URL is
        refreshed by re-reading the generation. ``timeout`` (s) is a deadline for all of it
        (``APITimeoutError`` past it, no partial file left). From an AsyncClient: a coroutine
        to await.
        """
        return self._download(path, timeout)

    @overload
    def save(
        self: GenerationOutput[BlockingT], path: str | Path = ".", *, timeout: float | None = None
    ) -> Path: ...
    @overload
    def save(
        self: GenerationOutput[AwaitingT], path: str | Path = ".", *, timeout: float | None = None
    ) -> Coroutine[Any, Any, Path]: ...
    def save(
        self, path: str | Path = ".", *, timeout: float | None = None
    ) -> Path | Coroutine[Any, Any, Path]:
        """Save into ``path`` (a directory, or a file name) and return the saved path;
        ``timeout`` (s) as for :meth:`download`."""
        return self._download(path, timeout)

    def _download(
        self, path: str | Path | None, timeout: float | None
    ) -> Path | Coroutine[Any, Any, Path]:
        return self._need_client()._download_output(self, path, timeout)

    def _need_client(self) -> Any:
        client = getattr(self, "_client", None)
        if client is None:
            raise RuntimeError("this output is not bound to a client; use client.save(...)")
        return client

    def _repr_html_(self) -> str:
        from mediagen.display._html import output_html

        return output_html(self)


def _error(value: Any) -> GenerationErrorInfo | None:
    if value is None:
        return None
    if isinstance(value, GenerationErrorInfo):
        return value
    if isinstance(value, Mapping):
        return GenerationErrorInfo.from_dict(value)
    return GenerationErrorInfo(raw={"message": str(value)}, message=str(value))


@dataclasses.dataclass(repr=False, eq=False)
class Generation(_Model, Generic[ClientT]):
    """A generation as the service reports it (``pending``, ``completed`` or ``failed``).

    ``wait()``, ``refresh()`` and ``save()`` act through the client that made it: their
    values from a ``Client``, coroutines to await from an ``AsyncClient``
    (``Generation[AsyncClient]``).
    """

    id: str = ""
    type: str | None = None
    status: str | None = None
    model: str | None = None
    prompt: str | None = None
    created_at: dt.datetime | None = None
    completed_at: dt.datetime | None = None
    credits_charged: float | None = None
    error: GenerationErrorInfo | None = None
    idempotency_key: str | None = None
    outputs: list[GenerationOutput[ClientT]] = dataclasses.field(default_factory=list)
    mode: str | None = None
    result_meta: dict[str, Any] | None = None
    _converters: ClassVar[dict[str, Any]] = {
        "created_at": parse_datetime,
        "completed_at": parse_datetime,
        "credits_charged": _float,
        "error": _error,
    }
    _shown: ClassVar[tuple[str, ...]] = (
        "id",
        "type",
        "model",
        "status",
        "credits_charged",
        "error",
    )

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any] | None, client: ClientCore | None = None, **_: Any
    ) -> Self:
        gen = super().from_dict(data, client=client)
        gen.outputs = [
            GenerationOutput.from_dict(o, client=client, generation_id=gen.id, generation=gen)
            for o in (gen.raw.get("outputs") or [])
            if isinstance(o, Mapping)
        ]
        return gen

    def _bind(self, client: ClientCore | None = None, **_: Any) -> None:
        self._client = client

    @property
    def done(self) -> bool:
        """True once the status is terminal (``completed`` or ``failed``)."""
        return self.status in TERMINAL_STATUSES

    is_terminal = done

    @property
    def failed(self) -> bool:
        """The job ended in failure: ``error`` says why (nothing is charged for it)."""
        return self.status == "failed"

    @property
    def completed(self) -> bool:
        """The job ended with its outputs."""
        return self.status == "completed"

    def raise_for_error(self) -> Self:
        """Raise :class:`GenerationFailedError` if this generation failed; else return it."""
        if self.status == "failed":
            from mediagen.client._errors import GenerationFailedError

            raise GenerationFailedError(self)
        return self

    @overload
    def wait(
        self: Generation[BlockingT], timeout: float | None = None, **options: Any
    ) -> Generation[BlockingT]: ...
    @overload
    def wait(
        self: Generation[AwaitingT], timeout: float | None = None, **options: Any
    ) -> Coroutine[Any, Any, Generation[AwaitingT]]: ...
    def wait(
        self, timeout: float | None = None, **options: Any
    ) -> Generation[Any] | Coroutine[Any, Any, Generation[Any]]:
        """Wait until terminal and return the final state (``client.generations.wait``, whose
        options ``on_update``, ``poll_interval`` and ``download`` it takes)."""
        return self._need_client().generations.wait(self, timeout=timeout, **options)

    @overload
    def refresh(
        self: Generation[BlockingT], *, timeout: float | None = None
    ) -> Generation[BlockingT]: ...
    @overload
    def refresh(
        self: Generation[AwaitingT], *, timeout: float | None = None
    ) -> Coroutine[Any, Any, Generation[AwaitingT]]: ...
    def refresh(
        self, *, timeout: float | None = None
    ) -> Generation[Any] | Coroutine[Any, Any, Generation[Any]]:
        """Read the current state from the service (a new Generation); ``timeout`` (s) is a
        deadline for the call, retries included."""
        return self._need_client().generations.get(self.id, timeout=timeout)

    @overload
    def save(
        self: Generation[BlockingT], directory: str | Path = ".", *, timeout: float | None = None
    ) -> list[Path]: ...
    @overload
    def save(
        self: Generation[AwaitingT], directory: str | Path = ".", *, timeout: float | None = None
    ) -> Coroutine[Any, Any, list[Path]]: ...
    def save(
        self, directory: str | Path = ".", *, timeout: float | None = None
    ) -> list[Path] | Coroutine[Any, Any, list[Path]]:
        """Save every output into ``directory``; returns the list of paths. ``timeout``
        (seconds) is a deadline for the downloads (``APITimeoutError`` past it)."""
        return self._need_client().save(self, directory, timeout=timeout)

    def _need_client(self) -> Any:
        client = getattr(self, "_client", None)
        if client is None:
            raise RuntimeError("this generation is not bound to a client")
        return client

    def _repr_html_(self) -> str:
        from mediagen.display._html import generation_html

        return generation_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": repr(self), "text/html": self._repr_html_()}


# --- catalog, estimate, credits -----------------------------------------------------------


@dataclasses.dataclass(repr=False, eq=False)
class ModelInfo(_Model):
    """A model catalog entry; ``catalog`` reads its modes, fields, allowed values and prices."""

    id: str = ""
    type: str | None = None
    name: str | None = None
    description: str | None = None
    audio_kind: str | None = None
    family: str | None = None
    plans: list[str] | None = None
    mode_required: bool | None = None
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)
    modes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    tiers: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    rules: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    voices: list[dict[str, Any]] | None = None
    price_summary: str | None = None
    example_request: dict[str, Any] = dataclasses.field(default_factory=dict)
    _shown: ClassVar[tuple[str, ...]] = ("id", "type", "name", "price_summary")

    @property
    def catalog(self) -> Catalog:
        """The catalog's rules for this model: local validation and the estimate's query
        (``mediagen.pricing.catalog.Catalog``)."""
        from mediagen.pricing.catalog import Catalog

        return Catalog(self.raw)

    @property
    def mode_ids(self) -> list[str]:
        """The ids of this model's modes, in catalog order."""
        return [str(m.get("id")) for m in self.modes if isinstance(m, Mapping)]

    def example(self, mode: str | None = None) -> dict[str, Any]:
        """A ready-to-send request for ``mode`` (the first mode when omitted)."""
        examples = self.example_request or {}
        if mode is None:
            mode = next(iter(examples), None)
        if mode not in examples:
            raise KeyError(f"model {self.id!r} has no example for mode {mode!r}")
        return dict(examples[mode])


@dataclasses.dataclass(repr=False, eq=False)
class Estimate(_Model):
    """A price quote (nothing reserved). ``credits_after_discount`` is what a submit reserves."""

    allowed: bool | None = None
    balance: float | None = None
    can_afford: bool | None = None
    credits: float | None = None
    credits_after_discount: float | None = None
    model: str | None = None
    billable_duration_seconds: float | None = None
    discount_percent: float | None = 0.0
    reason: str | None = None
    _converters: ClassVar[dict[str, Any]] = {
        "balance": _float,
        "credits": _float,
        "credits_after_discount": _float,
        "billable_duration_seconds": _float,
        "discount_percent": _float,
    }

    def _repr_html_(self) -> str:
        from mediagen.display._html import estimate_html

        return estimate_html(self)


@dataclasses.dataclass(repr=False, eq=False)
class MemberLimit(_Model):
    limit: float | None = None
    used: float | None = None
    remaining: float | None = None
    resets_at: dt.datetime | None = None
    _converters: ClassVar[dict[str, Any]] = {
        "limit": _float,
        "used": _float,
        "remaining": _float,
        "resets_at": parse_datetime,
    }


def _member_limit(value: Any) -> MemberLimit | None:
    return MemberLimit.from_dict(value) if isinstance(value, Mapping) else None


@dataclasses.dataclass(repr=False, eq=False)
class Credits(_Model):
    """What the key can spend now (``balance``), and the member cap when one applies."""

    balance: float | None = None
    organization_balance: float | None = None
    reserved: float | None = None
    plan: str | None = None
    discount_percent: float | None = None
    member_limit: MemberLimit | None = None
    _converters: ClassVar[dict[str, Any]] = {
        "balance": _float,
        "organization_balance": _float,
        "reserved": _float,
        "discount_percent": _float,
        "member_limit": _member_limit,
    }

    def _repr_html_(self) -> str:
        from mediagen.display._html import credits_html

        return credits_html(self)


@dataclasses.dataclass(frozen=True)
class RateStatus:
    """How this process paces the key's requests now (``client.rate_status()``).

    The spec puts one rate limit on each key and shows neither its value nor its window, so a
    long run says what it learned: a table's progress and a job card show it, so a slow run
    reads as "held to the key's limit" rather than as stuck.
    """

    #: requests per second every request of the key is held to (``rate_limit=``, or learned
    #: from 429s; None: not held, no 429 seen)
    pace: float | None
    #: 429 answers to this key's requests in this process so far
    limited: int
    #: how long a request of the key made now would wait: after a 429, or behind the pace
    #: when it binds (0: none waits)
    held_for: float

    def describe(self, *, waiting: bool = True) -> str:
        """One short line (empty while the key is not held): ``8.2 req/s held, 3 × 429``, and
        the wait when one holds the key's requests (``waiting=False`` leaves it out)."""
        parts = []
        if self.pace is not None:
            parts.append(f"{self.pace:.3g} req/s held")
        if self.limited:
            parts.append(f"{self.limited} × 429")
        if waiting and self.held_for >= 0.5:
            parts.append(f"waiting {self.held_for:.0f} s for the rate limit")
        return ", ".join(parts)


# --- uploads ------------------------------------------------------------------------------


@dataclasses.dataclass(repr=False, eq=False)
class UploadTicket(_Model):
    """A registered upload: PUT the bytes to ``upload_url`` with exactly ``required_headers``."""

    asset_id: str = ""
    upload_url: str | None = None
    required_headers: dict[str, str] = dataclasses.field(default_factory=dict)
    expires_at: dt.datetime | None = None
    media_type: str | None = None
    status: str | None = None
    _converters: ClassVar[dict[str, Any]] = {"expires_at": parse_datetime}
    _shown: ClassVar[tuple[str, ...]] = ("asset_id", "media_type", "status", "expires_at")

    def expired(self, now: dt.datetime | None = None, margin: float = 5.0) -> bool:
        """Whether the upload URL has expired, or will within ``margin`` seconds of ``now``."""
        if self.expires_at is None:
            return False
        now = now or dt.datetime.now(dt.timezone.utc)
        return (self.expires_at - now).total_seconds() <= margin


@dataclasses.dataclass(repr=False, eq=False)
class Asset(_Model):
    """An uploaded reference file; pass it (or ``asset_id``) as a reference input."""

    asset_id: str = ""
    status: str | None = None
    size_bytes: int | None = None
    media_type: str | None = None
    content_type: str | None = None
    filename: str | None = None
    _converters: ClassVar[dict[str, Any]] = {"size_bytes": _int}
    _shown: ClassVar[tuple[str, ...]] = ("asset_id", "status", "content_type", "size_bytes")

    def __str__(self) -> str:
        return self.asset_id

"""Sans-I/O core: build requests, check answers, turn responses into data or exceptions, and
decide retries.

``Client`` and ``AsyncClient`` send what these functions build and hand back what they
received; nothing here touches the network, and the retry policy only decides (the drivers
sleep). The one state kept beyond a request, a key's pace, is kept by a store the gate is
given (:mod:`mediagen.local._pace`: a file the processes of one machine share).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from mediagen.client import _errors
from mediagen.client._errors import UnexpectedResponseError, redact, redact_bytes, redact_value
from mediagen.local._pace import NEVER, LocalPace, PaceState, SharedPace, pace_store
from mediagen.wire import _names as _wire

# =================================================================================================
# The retry policy and the shared per-key gate: pure decisions, no I/O, no sleeping.
#
# ``RetryPolicy.delay(attempt, ...)`` says how long to wait before the next attempt, or None to
# give up. The drivers (``_drivers``) do the sleeping. Tests inject ``random`` and
# call the functions directly.
#
# Rules: connection errors, timeouts, 429 and 5xx are retried; 401, 402, 403, 404, 409 and 422
# never. A non-idempotent request (a submit without an idempotency key) is never retried after
# it may have reached the server -- the client always gives submits a key, so in practice every
# submit is retried safely.
# =================================================================================================

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Capped exponential backoff with jitter; ``Retry-After`` is honoured on 429."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    jitter: float = 0.5  # the delay is scaled by a random factor in [1 - jitter, 1]

    def should_retry_status(self, status: int) -> bool:
        return status in RETRY_STATUSES or (status >= 500 and status not in (501, 505))

    def backoff(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Delay before retry number ``attempt`` (0-based), without a server hint."""
        raw = min(self.max_delay, self.base_delay * (2**attempt))
        return raw * (1.0 - self.jitter * rand())

    def delay(
        self,
        attempt: int,
        *,
        status: int | None = None,
        connection_error: bool = False,
        retry_after: float | None = None,
        idempotent: bool = True,
        sent: bool = True,
        rand: Callable[[], float] = random.random,
    ) -> float | None:
        """Seconds to wait before the next attempt, or None when the error is final.

        ``attempt`` counts the retries already made. ``sent`` is False when the request
        certainly did not reach the server (a connect error), which makes even a
        non-idempotent request safe to retry.
        """
        if attempt >= self.max_retries:
            return None
        if connection_error:
            if not idempotent and sent:
                return None
            return self.backoff(attempt, rand)
        if status is None or not self.should_retry_status(status):
            return None
        if not idempotent and status != 429:  # a 429 was refused before any work
            return None
        if status == 429 and retry_after is not None:
            if retry_after > self.max_retry_after:
                return None
            # Honour the hint; a little jitter spreads clients that were told the same time.
            return retry_after + min(0.25, retry_after * 0.1) * rand()
        return self.backoff(attempt, rand)


class DeadlinePassed(Exception):
    """Raised by :class:`Attempts` when the caller's deadline leaves no time for a request."""


class Attempts:
    """The retry budget of one request, and the time it may take.

    Without a deadline: the policy's ``max_retries``. With ``persistent`` (a wait polling
    through an outage), transient errors are retried with capped backoff for as long as the
    deadline allows (forever without one). With a ``deadline`` (on ``clock``), every attempt's
    timeout and every pause is cut to the time left, so the request ends by then.
    """

    def __init__(
        self,
        policy: RetryPolicy,
        clock: Callable[[], float],
        deadline: float | None = None,
        persistent: bool = False,
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.deadline = deadline
        self.persistent = persistent
        self.count = 0

    def left(self) -> float | None:
        """Seconds to the deadline (None without one); raises DeadlinePassed at zero."""
        if self.deadline is None:
            return None
        left = self.deadline - self.clock()
        if left <= 0:
            raise DeadlinePassed()
        return left

    def timeout(self, configured: float) -> float | None:
        """The timeout of the next attempt: the configured one, cut to the time left."""
        left = self.left()
        return None if left is None else min(configured, left)

    def pause(self, seconds: float) -> float:
        """``seconds`` cut to the time left."""
        left = self.left()
        return seconds if left is None else min(seconds, left)

    def next_delay(self, *, counted: bool = True, **situation: Any) -> float | None:
        """How long to wait before retrying (cut to the deadline), or None if final.
        ``counted=False``: this retry does not use up one of ``max_retries`` (the call's
        deadline still bounds it)."""
        attempt = self.count
        if not counted and self.policy.max_retries > 0:
            delay = self.policy.delay(min(attempt, self.policy.max_retries - 1), **situation)
            return None if delay is None else self.pause(delay)
        if self.persistent:
            attempt = min(attempt, 30)  # keep backing off at the cap, never give up
            delay = replace(self.policy, max_retries=attempt + 1).delay(attempt, **situation)
        else:
            delay = self.policy.delay(attempt, **situation)
        if delay is None:
            return None
        self.count += 1
        return self.pause(delay)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP date); None if absent or bad."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    import datetime as dt

    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (when - dt.datetime.now(dt.timezone.utc)).total_seconds())


class KeyGate:
    """Shared by every client of one (service, key) on this machine: the pace of the key.

    The spec puts one rate limit on each key and shows neither its value nor its window: a
    client learns it only from 429s. So the gate paces every request of the key (polls and
    submits alike) at a rate it learns, additive-increase/multiplicative-decrease in the way of
    TCP: a 429 cuts the pace to ``CUT`` of what the service accepted over the last seconds (once
    per ``COOLDOWN``, however many requests of the burst came back 429; to ``RETREAT`` when
    429s come again before the pace settled: the limit fell); then the pace holds
    nearly still (``PROBE`` per second) for ``PLATEAU`` seconds near the limit just found, and
    grows by ``GROW`` per second after that, in case the limit was raised.

    Every 429 holds every request of the key for its ``Retry-After`` (then releases them
    ``release_spacing`` apart, not all at once, which would only earn the next 429). The spec
    shows neither the limit's window nor how the service counts: a fixed window refuses
    whatever comes before the time it named, and each refusal counts against the key. So the
    service's word is kept for the whole key, not only for the request it answered.

    What the service accepted is read over two spans, and the higher reading is kept: the rate
    over the last ``WINDOW`` seconds, or ``RECENT_SHARE`` of the rate over the last ``RECENT``.
    The long span alone reaches back into a ramp (a run's first seconds, a cluster's slow
    start): a cut there lands far below the limit, the pace stays there for the whole plateau,
    and each cut after climbs only a step. A full bucket's burst (a second's worth) lifts
    either reading to at most 1.2 times the limit, so the short one overshoots no more.

    ``rate`` (``rate_limit=``, requests per second) fixes the pace instead: nothing is learned.

    What the gate decides from lives in its ``store``: this process's memory, or a file every
    process of the user on this machine shares (:mod:`mediagen.local._pace`), so that the
    processes of one key keep one pace between them, learn it together and hand it to the next
    run. A slot is never reserved more than ``LEASE`` seconds ahead: what a process reserved
    and then took with it when it was killed is back within that time.
    Thread-safe; the caller sleeps for the returned delay (``time.sleep`` or ``asyncio.sleep``).
    """

    release_spacing = 0.05
    CUT = 0.9
    RETREAT = 0.5
    COOLDOWN = 1.0
    PLATEAU = 6.0
    PROBE = 0.015
    GROW = 1.0
    #: how far back the accepted rate is measured when a 429 comes (seconds)
    WINDOW = 5.0
    #: the recent span read too (seconds), and the share of its rate kept: a second's burst
    #: adds half the limit over two seconds, a fifth over ``WINDOW``
    RECENT = 2.0
    RECENT_SHARE = 0.8
    #: the slowest learned pace (requests per second)
    FLOOR = 0.2
    #: the furthest ahead of its turn a slot is reserved (seconds): a request whose slot would
    #: come later waits and asks again, so a killed process holds the key's budget no longer
    LEASE = 2.0

    def __init__(
        self,
        rate: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        store: LocalPace | SharedPace | None = None,
    ):
        self.rate = rate
        self.clock = clock
        self.store = store if store is not None else LocalPace()
        #: told of each cut (outside the store's lock): the rate the service accepted from
        #: this machine then, and the factor the pace was cut by. How the machines of a
        #: cluster hear of each other's cuts (see :meth:`cut_elsewhere`)
        self.cut_listeners: list[Callable[[float, float], None]] = []

    @property
    def shared(self) -> bool:
        """Whether other processes on this machine share this gate's pace."""
        return self.store.shared

    @property
    def learned(self) -> float | None:
        """The pace learned from 429s (None: no 429 seen yet, nothing to hold to)."""
        with self.store.locked(self.clock) as state:
            return state.learned

    @learned.setter
    def learned(self, value: float | None) -> None:
        with self.store.locked(self.clock) as state:
            state.learned = value

    @property
    def penalties(self) -> int:
        """How many 429s so far: a held request re-checks after a new one."""
        with self.store.locked(self.clock) as state:
            return state.penalties

    @property
    def pace(self) -> float | None:
        """Requests per second this key is held to now (None: not held to any)."""
        return self.rate or self.learned

    def acquire(self) -> float:
        """How long to wait before sending one request (see :meth:`reserve`)."""
        return self.reserve()[0]

    def reserve(self) -> tuple[float, bool]:
        """Reserve a slot for one request: how long to wait before sending it, and whether the
        slot is reserved (False: it would be more than ``LEASE`` ahead; wait, then ask again)."""
        with self.store.locked(self.clock) as s:
            now = self.clock()
            blocked = s.blocked_until
            earliest = start = max(now, blocked)
            if now < blocked:  # held by a 429: leave one at a time
                start = max(start, s.release_next)
            pace = self.rate or s.learned
            if pace:
                slot = max(start, s.next_slot)
                if slot - earliest > self.LEASE:
                    return slot - self.LEASE - now, False
                if s.next_slot > start:
                    s.held_at = now  # the pace, not the caller, is what holds requests back
                s.next_slot = slot + 1.0 / pace
                start = slot
            if now < blocked:
                s.release_next = max(s.release_next, earliest) + self.release_spacing
            return start - now, True

    def answered(self) -> None:
        """The service answered a request of this key without a 429: count it, grow the pace."""
        with self.store.locked(self.clock) as s:
            now = self.clock()
            s.count_answer(now)
            if self.rate or s.learned is None:
                return
            elapsed, s.grown_at = max(0.0, now - s.grown_at), now
            if now - s.held_at > max(1.0, 2.0 / s.learned):
                # the pace held nothing back lately (within two of its own spacings, so a
                # slow pace, whose requests are a second or more apart, still grows): a key
                # used lightly grows no huge pace
                return
            growth = self.PROBE if now - s.cut_at < self.PLATEAU else self.GROW
            s.learned *= 1.0 + growth * min(elapsed, 1.0)

    def penalize(self, seconds: float, sent_at: float | None = None) -> None:
        """The service said 429 with ``Retry-After: seconds`` to a request sent at ``sent_at``
        (the gate's clock): every request of the key waits that long, this one included. A
        request sent before the pace was last cut says nothing of the new pace (many are in
        flight when a key has several processes): no cut, as TCP cuts once per window."""
        cut: tuple[float, float] | None = None
        with self.store.locked(self.clock) as s:
            now = self.clock()
            s.penalties += 1
            stale = sent_at is not None and sent_at <= s.cut_at
            if not self.rate and not stale and now - s.cut_at >= self.COOLDOWN:
                cut = self._cut(s, now)
            s.blocked_until = max(s.blocked_until, now + max(0.0, seconds))
            s.release_next = s.blocked_until
        if cut is not None:
            self._tell(*cut)

    def cut_elsewhere(self) -> bool:
        """Another machine of the cluster cut its pace after a 429 of this key: cut this one's
        the same way, as if the 429 were its own, unless it cut within ``COOLDOWN`` (the same
        crowding, met here too). So the machines cut together, as one learner would: each
        learning alone, one machine's growth is another's 429 while its pace settles, which it
        reads as a fallen limit, and the paces retreat to the floor. The requests this machine
        sent before the cut say nothing of the new pace (:meth:`penalize`). Whether it cut."""
        with self.store.locked(self.clock) as s:
            now = self.clock()
            if self.rate or now - s.cut_at < self.COOLDOWN:
                return False
            cut = self._cut(s, now)
        self._tell(*cut)
        return True

    def _tell(self, accepted: float, factor: float) -> None:
        for listener in list(self.cut_listeners):
            listener(accepted, factor)

    def _cut(self, s: PaceState, now: float) -> tuple[float, float]:
        """Lower the learned pace below what the service accepted (under the store's lock):
        the accepted rate, and the factor cut by. Nothing accepted lately (the key was idle
        here, or held by the 429s) says nothing of the limit: the pace it held is cut instead,
        never thrown to the floor."""
        accepted = max(
            s.accepted_rate(now, self.WINDOW),
            self.RECENT_SHARE * s.accepted_rate(now, self.RECENT),
        )
        base = accepted if s.learned is None else min(s.learned, accepted or s.learned)
        # 429s again soon after a cut: the limit fell, not just a probe too far
        cut = self.CUT if now - s.cut_at >= self.PLATEAU else self.RETREAT
        s.learned = max(self.FLOOR, cut * (base or self.FLOOR))
        s.cut_at = s.grown_at = now
        # the slots already handed out at the old pace go at the new one
        s.next_slot = min(s.next_slot, now + 1.0 / s.learned)
        return accepted, cut

    def start_at(self, pace: float) -> None:
        """A slow start at ``pace`` (requests per second) or faster, while no 429 has cut this
        key's pace (here, or told from another machine): nothing is known of the limit. Called
        again with a higher pace (a cluster's share of the start grows as its workers join),
        it raises the pace to that; it never lowers one."""
        with self.store.locked(self.clock) as s:
            if s.cut_at > NEVER or (s.learned is not None and s.learned >= pace):
                return
            s.learned = max(self.FLOOR, pace)
            s.next_slot = min(s.next_slot, self.clock() + 1.0 / s.learned)

    def adopt(self, pace: float) -> None:
        """Hold to ``pace`` (requests per second) as if learned: a pace another machine or an
        earlier run learned for this key, or this machine's share of it."""
        with self.store.locked(self.clock) as s:
            now = self.clock()
            s.learned = max(self.FLOOR, pace)
            s.next_slot = min(s.next_slot, now + 1.0 / s.learned)

    @property
    def blocked_for(self) -> float:
        with self.store.locked(self.clock) as s:
            now = self.clock()
            return max(0.0, s.blocked_until - now)

    @property
    def waiting_for(self) -> float:
        """How long a request of the key made now would wait: a 429's hold, or the pace when
        it binds (requests queued behind it)."""
        with self.store.locked(self.clock) as s:
            return max(0.0, max(s.blocked_until, s.next_slot) - self.clock())


_GATES: dict[tuple[str, str], KeyGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(base_url: str, key_fingerprint: str, rate: float | None = None) -> KeyGate:
    """The gate of one (service, key), one per process and sharing its state with the other
    processes of this machine when it can; ``rate`` updates it when given."""
    with _GATES_LOCK:
        gate = _GATES.get((base_url, key_fingerprint))
        if gate is None:
            store = pace_store(base_url, key_fingerprint)
            # another process's times must mean the same: the wall clock, not this boot's
            clock = time.time if store.shared else time.monotonic
            gate = _GATES[(base_url, key_fingerprint)] = KeyGate(rate, clock, store)
        elif rate is not None:
            gate.rate = rate
        return gate


# =================================================================================================
# What a 2xx answer must hold, per endpoint: the spec's required fields.
#
# A success whose body lacks them (an empty object, a list where an object belongs, a generation
# with no id or an unknown status) is not a success the client can act on: read as defaults it
# would show an empty balance, an id of ``""``, or a job "still pending" that ``wait()`` polls
# forever. Such a body raises :class:`UnexpectedResponseError` naming the endpoint and what is
# wrong.
# The API is additive-only, so fields this client does not know are never checked; a status
# value it does not know is an error, since the spec fixes the three a generation can have.
# =================================================================================================

#: the spec's statuses of a generation (the client acts on each: nothing else can be waited on)
GENERATION_STATUSES = ("pending", "completed", "failed")
#: the spec's required fields of a Generation, and of each of its outputs
GENERATION_REQUIRED = ("id", "type", "status", "model", "prompt", "created_at")
OUTPUT_REQUIRED = ("url",)

Check = Callable[[Any, str, str], Any]


def _object(data: Any, what: str, method: str, path: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        shown = "no body" if data is None else f"a JSON {_json_kind(data)}"
        raise UnexpectedResponseError(f"{what} is {shown}, not an object", method=method, path=path)
    return data


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _missing(data: Mapping[str, Any], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if data.get(name) is None]


def _number(data: Mapping[str, Any], name: str, what: str, method: str, path: str) -> None:
    value = data.get(name)
    if value is None:
        raise UnexpectedResponseError(f"{what} has no {name!r}", method=method, path=path)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UnexpectedResponseError(
            f"{what} has {name!r} = {value!r}, not a number", method=method, path=path
        )


def check_generation(data: Any, method: str, path: str, what: str = "the answer") -> Any:
    """A Generation: its required fields present, ``id`` a non-empty string, a known status."""
    found = _object(data, what, method, path)
    missing = _missing(found, GENERATION_REQUIRED)
    if missing:
        names = ", ".join(repr(n) for n in missing)
        raise UnexpectedResponseError(
            f"{what} is a generation without its required {names}", method=method, path=path
        )
    if not isinstance(found["id"], str) or not found["id"]:
        raise UnexpectedResponseError(
            f"{what} has the generation id {found['id']!r}, not an id", method=method, path=path
        )
    status = found["status"]
    if status not in GENERATION_STATUSES:
        raise UnexpectedResponseError(
            f"{what} has the unknown status {status!r} for generation {found['id']} (the spec's "
            f"are {', '.join(GENERATION_STATUSES)})",
            method=method,
            path=path,
        )
    outputs = found.get("outputs")
    if outputs is not None and not isinstance(outputs, list):
        raise UnexpectedResponseError(
            f"{what} has outputs that are not a list", method=method, path=path
        )
    for index, output in enumerate(outputs or ()):
        inner = f"output {index} of generation {found['id']}"
        item = _object(output, inner, method, path)
        if _missing(item, OUTPUT_REQUIRED) and not item.get("b64_json"):
            raise UnexpectedResponseError(f"{inner} has no 'url'", method=method, path=path)
    return data


def check_generation_page(data: Any, method: str, path: str) -> Any:
    """A page of the list: an object whose items (if any) are each a Generation."""
    return _page(data, method, path, check_generation, "the page")


def _page(data: Any, method: str, path: str, check: Callable[..., Any], page: str) -> Any:
    """A list's page: an object whose items are a list, each item passing ``check``."""
    items = _object(data, "the answer", method, path).get(_wire.LIST_ITEMS)
    if not isinstance(items, list):
        problem = "has no" if items is None else "has something other than a list as"
        raise UnexpectedResponseError(
            f"the answer {problem} {_wire.LIST_ITEMS!r}", method=method, path=path
        )
    for index, item in enumerate(items):
        check(item, method, path, what=f"item {index} of {page}")
    return data


def check_credits(data: Any, method: str, path: str) -> Any:
    """The credits: at least the balance the key can spend (docs/wire-contract.md's name)."""
    _number(_object(data, "the answer", method, path), "balance", "the answer", method, path)
    return data


def check_estimate(data: Any, method: str, path: str) -> Any:
    """A quote: its price after discount is what a budget reserves, so it must be a number
    (a quote without one would let a budgeted submit through unchecked)."""
    found = _object(data, "the answer", method, path)
    for name in ("credits", "credits_after_discount"):
        _number(found, name, "the answer", method, path)
        if found[name] < 0:  # a negative price would open every budget it passes through
            raise UnexpectedResponseError(
                f"the answer has {name!r} = {found[name]!r}, a price below 0 credits",
                method=method,
                path=path,
            )
    return data


def check_model(data: Any, method: str, path: str, what: str = "the answer") -> Any:
    """A catalog entry: at least its ``id``."""
    found = _object(data, what, method, path)
    if not isinstance(found.get("id"), str) or not found["id"]:
        raise UnexpectedResponseError(
            f"{what} is a model without an 'id'", method=method, path=path
        )
    return data


def check_model_page(data: Any, method: str, path: str) -> Any:
    """The catalog: an object whose items are each a model."""
    return _page(data, method, path, check_model, "the list")


def check_upload_ticket(data: Any, method: str, path: str) -> Any:
    """A registered upload: its ``asset_id`` and the ``upload_url`` the bytes go to."""
    found = _object(data, "the answer", method, path)
    missing = [n for n in ("asset_id", "upload_url") if not found.get(n)]
    if missing:
        names = ", ".join(repr(n) for n in missing)
        raise UnexpectedResponseError(f"the answer has no {names}", method=method, path=path)
    return data


# =================================================================================================
# Requests and answers: what each endpoint sends, and how its answer becomes data or an error.
# =================================================================================================


@dataclass(frozen=True)
class RequestSpec:
    """One API request: ``path`` is relative to the base URL (always under ``/v1``)."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    idempotent: bool = True
    #: Reads a 2xx body in place of ``json.loads`` (a history page straight into columns).
    #: A ``ValueError`` from it for a body that is not JSON is an answer lost on the way.
    decode: Callable[[bytes], Any] | None = None
    #: Checks the decoded JSON of a 2xx (a ``check_*`` function above: the spec's required
    #: fields); raises UnexpectedResponseError naming this endpoint when they are not there.
    expect: Callable[[Any, str, str], Any] | None = None


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return value


def _query(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _query_value(v) for k, v in params.items() if v is not None}


def format_datetime(value: dt.datetime | str) -> str:
    """ISO 8601 with an explicit offset (naive datetimes are taken as UTC)."""
    if isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    text = value.astimezone(dt.timezone.utc).isoformat()
    return text.replace("+00:00", "Z")


def _segment(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string, not {value!r}")
    return quote(value, safe="")


# --- builders -----------------------------------------------------------------------------


def submit(
    kind: str,
    body: Mapping[str, Any],
    idempotency_key: str | None,
    extra_headers: Mapping[str, str] | None = None,
) -> RequestSpec:
    """``POST /v1/{videos,images,audio}``; the key goes in the header and the body alike."""
    if kind not in _wire.SUBMIT_PATHS:
        raise ValueError(f"kind must be one of {sorted(_wire.SUBMIT_PATHS)}, not {kind!r}")
    payload = dict(body)
    headers: dict[str, str] = {}
    if idempotency_key is not None:
        payload["idempotency_key"] = idempotency_key
        headers[_wire.IDEMPOTENCY_HEADER] = idempotency_key
    headers.update(extra_headers or {})
    return RequestSpec(
        "POST",
        _wire.SUBMIT_PATHS[kind],
        json=payload,
        headers=headers,
        idempotent=idempotency_key is not None,
        expect=check_generation,
    )


def get_generation(generation_id: str) -> RequestSpec:
    return RequestSpec(
        "GET",
        _wire.GENERATION_PATH.format(generation_id=_segment(generation_id, "generation_id")),
        expect=check_generation,
    )


def list_generations(
    *,
    limit: int | None = None,
    after: str | None = None,
    status: str | None = None,
    type: str | None = None,
    model: str | None = None,
    created_after: dt.datetime | str | None = None,
    decode: Callable[[bytes], Any] | None = None,
) -> RequestSpec:
    params = {
        _wire.LIST_LIMIT_PARAM: limit,
        _wire.LIST_CURSOR_PARAM: after,
        "status": status,
        "type": type,
        "model": model,
        "created_after": created_after,
    }
    return RequestSpec(
        "GET",
        _wire.GENERATIONS_PATH,
        params=_query(params),
        decode=decode,
        expect=None if decode is not None else check_generation_page,
    )


def list_models(type: str | None = None) -> RequestSpec:
    return RequestSpec(
        "GET", _wire.MODELS_PATH, params=_query({"type": type}), expect=check_model_page
    )


def get_model(model_id: str) -> RequestSpec:
    return RequestSpec(
        "GET",
        _wire.MODEL_PATH.format(model_id=_segment(model_id, "model id")),
        expect=check_model,
    )


def estimate(model_id: str, query: Mapping[str, Any]) -> RequestSpec:
    return RequestSpec(
        "GET",
        _wire.ESTIMATE_PATH.format(model_id=_segment(model_id, "model id")),
        params=_query(query),
        expect=check_estimate,
    )


def credits() -> RequestSpec:
    return RequestSpec("GET", _wire.CREDITS_PATH, expect=check_credits)


def register_upload(filename: str, content_type: str, size_bytes: int) -> RequestSpec:
    body = {
        _wire.UPLOAD_FILENAME: filename,
        _wire.UPLOAD_CONTENT_TYPE: content_type,
        _wire.UPLOAD_SIZE: int(size_bytes),
    }
    return RequestSpec("POST", _wire.UPLOADS_PATH, json=body, expect=check_upload_ticket)


# --- responses ----------------------------------------------------------------------------


def decode_json(content: bytes) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


def error_from_response(
    status: int,
    headers: Mapping[str, str],
    content: bytes,
    *,
    method: str | None = None,
    path: str | None = None,
    secrets: tuple[str, ...] = (),
) -> _errors.APIError:
    """The exception for an error response; both the spec's body and FastAPI's are read.

    Everything taken from the body is redacted first (``secrets`` and anything that looks like
    a credential): a server or proxy that echoes the request's headers must not put the key
    into a message, a repr or a traceback.

    Shapes: ``{"error": {code, message, details, trace_id}}`` (the spec's), ``{"detail":
    [{loc, msg, type}]}`` (the 422 of ``GET /v1/generations/{id}`` may carry it), ``{"detail":
    "text"}``, or a body that is not JSON at all.
    """
    content = redact_bytes(content, secrets)
    body = redact_value(decode_json(content), secrets)
    code, message, trace_id, details = _error_fields(body, status)
    if not message:
        text = content[:300].decode("utf-8", "replace").strip() if content else ""
        message = text or f"HTTP {status} with no error body"
    message = redact(str(message), secrets)
    trace_id = trace_id or _header(headers, _wire.TRACE_HEADER)
    cls = _errors.error_class(status, code)
    kwargs: dict[str, Any] = {
        "status": status,
        "code": code,
        "details": details,
        "trace_id": trace_id,
        "method": method,
        "path": path,
        "body": body,
    }
    if cls is _errors.RateLimitError:
        kwargs["retry_after"] = parse_retry_after(_header(headers, _wire.RETRY_AFTER_HEADER))
    found = cls(message, **kwargs)
    if isinstance(found, _errors.PaymentRequiredError):
        _add_credit_figures(found, body)
    return found


def _error_fields(body: Any, status: int) -> tuple[Any, Any, Any, list[dict[str, Any]]]:
    """``(code, message, trace_id, details)`` read from an error body of either shape (the
    spec's ``{"error": ...}`` or FastAPI's ``{"detail": ...}``); None where it says nothing."""
    code = message = trace_id = None
    details: list[dict[str, Any]] = []
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        error = body["error"]
        code = error.get("code")
        message = error.get("message")
        trace_id = error.get("trace_id")
        details = [dict(d) for d in error.get("details") or [] if isinstance(d, Mapping)]
    elif isinstance(body, Mapping) and "detail" in body:
        detail = body["detail"]
        if isinstance(detail, list):
            details = [dict(d) for d in detail if isinstance(d, Mapping)]
            message = "Request validation failed: " + "; ".join(
                _errors.format_detail(d) for d in details[:5]
            )
            code = "validation_error" if status == 422 else None
        else:
            message = str(detail)
    return code, message, trace_id, details


def _add_credit_figures(found: _errors.PaymentRequiredError, body: Any) -> None:
    """A 402 states its shortfall: the credits required and available, when the body says."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        found.required = _credits_figure(error.get(_wire.ERROR_REQUIRED_CREDITS))
        found.available = _credits_figure(error.get(_wire.ERROR_AVAILABLE_CREDITS))


def _credits_figure(value: Any) -> float | None:
    """A number of credits from an error body (None for anything else, such as a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        lower = name.lower()
        for key, found in headers.items():
            if key.lower() == lower:
                return found
    return value


def page_items(page: Mapping[str, Any]) -> list[Any]:
    items = page.get(_wire.LIST_ITEMS)
    return list(items) if isinstance(items, list) else []


def page_next_cursor(page: Mapping[str, Any]) -> str | None:
    cursor = page.get(_wire.LIST_NEXT_CURSOR)
    if not cursor or page.get(_wire.LIST_HAS_MORE) is False:
        return None
    return str(cursor)

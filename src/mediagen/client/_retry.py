"""The retry policy and the shared per-key gate: pure decisions, no I/O, no sleeping.

``RetryPolicy.delay(attempt, ...)`` says how long to wait before the next attempt, or None to
give up. The drivers in ``_sync`` / ``_async`` do the sleeping. Tests inject ``random`` and
call the functions directly.

Rules: connection errors, timeouts, 429 and 5xx are retried; 401, 402, 403, 404, 409 and 422
never. A non-idempotent request (a submit without an idempotency key) is never retried after
it may have reached the server -- the client always gives submits a key, so in practice every
submit is retried safely.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

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

    def next_delay(self, **situation: Any) -> float | None:
        """How long to wait before retrying (cut to the deadline), or None if final."""
        attempt = self.count
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
    """Shared by every client of one (service, key) in this process.

    After a 429 every request of that key waits out ``Retry-After`` (no 429 storm from many
    pollers), and the requests held meanwhile are released ``release_spacing`` seconds apart
    rather than all at once (which would only earn the next 429). An optional ``rate``
    (requests per second) spaces requests out at all times. Thread-safe; the caller sleeps for
    the returned delay (``time.sleep`` or ``asyncio.sleep``).
    """

    release_spacing = 0.05

    def __init__(self, rate: float | None = None, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.clock = clock
        self._blocked_until = 0.0
        self._release_next = 0.0
        self._next_slot = 0.0
        self.penalties = 0  # how many 429s so far: a held request re-checks after a new one
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Reserve a slot for one request; returns how long to wait before sending it."""
        with self._lock:
            now = self.clock()
            start = max(now, self._blocked_until)
            if now < self._blocked_until:  # held by a 429: leave one at a time
                start = max(start, self._release_next)
                self._release_next = start + self.release_spacing
            if self.rate:
                start = max(start, self._next_slot)
                self._next_slot = start + 1.0 / self.rate
            return start - now

    def penalize(self, seconds: float) -> None:
        """The service said 429 with ``Retry-After: seconds``: hold every request that long."""
        with self._lock:
            self._blocked_until = max(self._blocked_until, self.clock() + max(0.0, seconds))
            self._release_next = self._blocked_until
            self.penalties += 1

    @property
    def blocked_for(self) -> float:
        with self._lock:
            return max(0.0, self._blocked_until - self.clock())


_GATES: dict[tuple[str, str], KeyGate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(base_url: str, key_fingerprint: str, rate: float | None = None) -> KeyGate:
    """The process-wide gate of one (service, key); ``rate`` updates it when given."""
    with _GATES_LOCK:
        gate = _GATES.get((base_url, key_fingerprint))
        if gate is None:
            gate = _GATES[(base_url, key_fingerprint)] = KeyGate(rate)
        elif rate is not None:
            gate.rate = rate
        return gate

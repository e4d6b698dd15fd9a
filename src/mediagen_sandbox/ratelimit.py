"""Per-key token buckets: polling counts too (the spec's per-key rate limit).

Each key's requests are counted as they meet the bucket, let through or limited, so a test
can see what several processes of one key sent together (``GET /admin/keys/{id}/requests``).
A key may have a limit of its own (``PATCH /admin/keys/{id}``), so one test or benchmark can
throttle its key without slowing every other key of the server (the configured limit is the
default for the rest). Like the runtime settings, own limits live in memory only.
"""

from __future__ import annotations

import math
import threading
import time


class RateLimiter:
    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, last time)
        self._lock = threading.Lock()
        #: key id -> [let through, limited] since the server started (a reset keeps them)
        self._counts: dict[str, list[int]] = {}
        #: key id -> (rate, burst): a key's own limit, instead of the server's
        self._own: dict[str, tuple[float, int]] = {}

    def set_own_limit(self, key_id: str, limit: tuple[float, int] | None) -> None:
        """Give a key a limit of its own ((per second, burst)), or None to take the server's
        again; the key's bucket starts full under it."""
        with self._lock:
            if limit is None:
                self._own.pop(key_id, None)
            else:
                self._own[key_id] = limit
            self._buckets.pop(key_id, None)

    def own_limit(self, key_id: str) -> tuple[float, int] | None:
        with self._lock:
            return self._own.get(key_id)

    def take(self, key_id: str, rate: float, burst: int) -> int:
        """Take one token; return 0 when allowed, else the whole seconds to wait. ``rate``
        and ``burst``: the server's limit, for a key without one of its own."""
        now = time.monotonic()
        with self._lock:
            rate, burst = self._own.get(key_id, (rate, burst))
            tokens, last = self._buckets.get(key_id, (float(burst), now))
            tokens = min(float(burst), tokens + (now - last) * rate)
            counts = self._counts.setdefault(key_id, [0, 0])
            if tokens >= 1.0:
                self._buckets[key_id] = (tokens - 1.0, now)
                counts[0] += 1
                return 0
            self._buckets[key_id] = (tokens, now)
            counts[1] += 1
            wait = (1.0 - tokens) / rate if rate > 0 else 60.0
            return max(1, math.ceil(wait))

    def reset(self) -> None:
        with self._lock:
            self._buckets.clear()

    def counts(self, key_id: str) -> tuple[int, int]:
        """(let through, limited): the key's requests that met the bucket so far."""
        with self._lock:
            passed, limited = self._counts.get(key_id, (0, 0))
            return passed, limited

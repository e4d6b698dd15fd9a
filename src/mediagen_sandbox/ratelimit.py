"""Per-key token buckets: polling counts too (the spec's per-key rate limit).

Each key's requests are counted as they meet the bucket, let through or limited, so a test
can see what several processes of one key sent together (``GET /admin/keys/{id}/requests``).
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

    def take(self, key_id: str, rate: float, burst: int) -> int:
        """Take one token; return 0 when allowed, else the whole seconds to wait."""
        now = time.monotonic()
        with self._lock:
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

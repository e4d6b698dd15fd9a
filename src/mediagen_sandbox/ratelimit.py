"""Per-key token buckets: polling counts too (the spec's per-key rate limit)."""

from __future__ import annotations

import math
import threading
import time


class RateLimiter:
    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, last time)
        self._lock = threading.Lock()

    def take(self, key_id: str, rate: float, burst: int) -> int:
        """Take one token; return 0 when allowed, else the whole seconds to wait."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(key_id, (float(burst), now))
            tokens = min(float(burst), tokens + (now - last) * rate)
            if tokens >= 1.0:
                self._buckets[key_id] = (tokens - 1.0, now)
                return 0
            self._buckets[key_id] = (tokens, now)
            wait = (1.0 - tokens) / rate if rate > 0 else 60.0
            return max(1, math.ceil(wait))

    def reset(self) -> None:
        with self._lock:
            self._buckets.clear()

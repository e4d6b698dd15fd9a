"""Runtime settings of a running sandbox: speed, URL lifetimes, rate limits and faults.

They start from the command line (``--speed``) and defaults, change through
``PATCH /admin/config``, and are not persisted: a restart starts from the flags again
(the data — orgs, keys, generations, ledger, assets — is what survives a restart).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field

GENERATION_ERROR_CODES = (
    "rate_limited",
    "timeout",
    "safety",
    "invalid_voice",
    "invalid_request",
    "billing_or_access",
    "provider_auth",
    "provider_unavailable",
    "provider_error",
)


@dataclass
class RuntimeConfig:
    speed: float = 1.0  # latency multiplier: 0 = as fast as rendering allows
    output_url_ttl_seconds: float = 3600.0
    upload_url_ttl_seconds: float = 600.0  # the spec's ten minutes
    max_upload_bytes: int = 2 * 1024**3
    rate_limit_per_second: float = 100.0  # per API key, token bucket refill rate
    rate_limit_burst: int = 200  # bucket size
    failure_rates: dict[str, float] = field(default_factory=dict)  # model id -> probability
    failure_code: str = "provider_error"  # GenerationError code for random failures
    drop_next_submits: int = 0  # the next N fresh submits commit, then drop the connection
    error_next_requests: int = 0  # the next N `/v1` requests fail with 500 internal_error

    def to_dict(self) -> dict:
        return asdict(self)


class ConfigHolder:
    """Thread-safe holder; ``take(name)`` consumes one of a "next N" budget."""

    def __init__(self, config: RuntimeConfig) -> None:
        self.current = config
        self._lock = threading.Lock()

    def update(self, changes: dict) -> RuntimeConfig:
        with self._lock:
            for name, value in changes.items():
                setattr(self.current, name, value)
            return self.current

    def take(self, budget: str) -> bool:
        """True (and one less left) when the budget ``budget`` (e.g. ``drop_next_submits``)
        is not used up."""
        with self._lock:
            left = getattr(self.current, budget)
            if left > 0:
                setattr(self.current, budget, left - 1)
                return True
            return False

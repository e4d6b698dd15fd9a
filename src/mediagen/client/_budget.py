"""Cost guards: a credit budget that refuses, before sending, a submit it cannot cover."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from mediagen.client._errors import BudgetExceededError


class Budget:
    """``limit`` credits to spend; each submit takes its estimate (``credits_after_discount``).

    Thread-safe. ``spent`` counts what submits reserved through this budget (the estimate,
    which equals the charge; a failed generation's refund is not given back here).
    """

    def __init__(self, limit: float) -> None:
        if limit < 0:
            raise ValueError("a budget must be >= 0 credits")
        self.limit = float(limit)
        self.spent = 0.0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> float:
        return round(self.limit - self.spent, 2)

    def reserve(self, credits: float) -> None:
        """Take ``credits`` or raise :class:`BudgetExceededError` (nothing taken)."""
        with self._lock:
            remaining = round(self.limit - self.spent, 2)
            if credits > remaining + 1e-9:
                raise BudgetExceededError(credits, remaining, self.limit)
            self.spent = round(self.spent + credits, 2)

    def release(self, credits: float) -> None:
        """Give back a reservation whose submit was refused by the service."""
        with self._lock:
            self.spent = max(0.0, round(self.spent - credits, 2))

    def __repr__(self) -> str:
        return f"Budget(limit={self.limit:g}, spent={self.spent:g}, remaining={self.remaining:g})"


_ACTIVE: contextvars.ContextVar[tuple[Budget, ...]] = contextvars.ContextVar(
    "mediagen_budgets", default=()
)


def active_budgets() -> tuple[Budget, ...]:
    return _ACTIVE.get()


@contextmanager
def budget(limit: float | Budget) -> Iterator[Budget]:
    """``with mediagen.budget(50): ...``: every submit inside (sync or async) counts against it."""
    found = limit if isinstance(limit, Budget) else Budget(limit)
    token = _ACTIVE.set((*_ACTIVE.get(), found))
    try:
        yield found
    finally:
        _ACTIVE.reset(token)

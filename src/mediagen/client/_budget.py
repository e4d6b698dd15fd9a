"""Cost guards: a credit budget that refuses, before sending, a submit it cannot cover."""

from __future__ import annotations

import contextvars
import math
import numbers
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from mediagen.client._errors import BudgetExceededError
from mediagen.local import _ledger as ledger


class Budget:
    """``limit`` credits to spend; each submit takes its estimate (``credits_after_discount``).

    Thread-safe. ``spent`` counts what submits reserved through this budget (the estimate,
    which equals the charge; a failed generation's refund is not given back here).
    """

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.spent = 0.0
        self._lock = threading.Lock()

    @property
    def limit(self) -> float:
        """The credits this budget allows; set it to any finite number >= 0, never NaN."""
        return self._limit

    @limit.setter
    def limit(self, value: float) -> None:
        self._limit = credit_limit("limit", value)

    @property
    def remaining(self) -> float:
        """Credits left: the limit minus what was reserved so far."""
        return round(self.limit - self.spent, 2)

    def reserve(self, credits: float) -> None:
        """Take ``credits`` or raise :class:`BudgetExceededError` (nothing taken); an amount
        that is not a finite number >= 0 (a quote of -100 credits, say) raises ValueError."""
        credits = credit_limit("the estimate", credits)
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


def credit_limit(name: str, value: object) -> float:
    """``value`` as a number of credits, or a ValueError naming ``name`` and the value.

    A guard must never be disabled by its own limit: NaN compares false with everything (so
    ``credits > nan`` would let every submit through, and a NaN comes easily from the mean of
    an empty column), infinity is no limit, and a string or a bool is a mistake, not a number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number of credits, not {value!r}")
    found = float(value)
    if not math.isfinite(found):
        raise ValueError(f"{name} must be a finite number of credits, not {value!r}")
    if found < 0:
        raise ValueError(f"{name} must be >= 0 credits, not {value!r}")
    return found


_ACTIVE: contextvars.ContextVar[tuple[Budget, ...]] = contextvars.ContextVar(
    "mediagen_budgets", default=()
)


def refuse_over(
    total: float,
    budgets: tuple[Budget, ...],
    max_credits: float | None,
    name: str = "max_credits",
) -> None:
    """Raise :class:`BudgetExceededError` (nothing is sent) when ``total`` credits are more
    than any of ``budgets`` has left, or more than ``max_credits`` (the caller's argument
    ``name``). Either of those that is not a finite number >= 0 raises ValueError naming it:
    ``nan`` compares false with everything and would let the whole run through."""
    total = credit_limit("the total estimate", total)
    limits = [(b.remaining, b.limit) for b in budgets]
    if max_credits is not None:
        cap = credit_limit(name, max_credits)
        limits.append((cap, cap))
    for remaining, limit in limits:
        if total > remaining + 1e-9:
            raise BudgetExceededError(total, remaining, limit)


def active_budgets() -> tuple[Budget, ...]:
    return _ACTIVE.get()


@contextmanager
def budget(limit: float | Budget) -> Iterator[Budget]:
    """``with mediagen.budget(50): ...``: every submit inside (sync or async) counts against it."""
    found = limit if isinstance(limit, Budget) else Budget(credit_limit("budget", limit))
    token = _ACTIVE.set((*_ACTIVE.get(), found))
    try:
        yield found
    finally:
        _ACTIVE.reset(token)


class SpendLimitExceededError(BudgetExceededError):
    """A submit was refused locally: it would take the spend of a rolling window over its limit."""

    def __init__(self, needed: float, remaining: float, limit: float, window: str) -> None:
        super().__init__(needed, remaining, limit)
        self.window = window
        self.args = (
            f"This request would cost {needed:g} credits but only {remaining:g} of your "
            f"{window} limit of {limit:g} are left; nothing was sent.",
        )


#: Window name -> length in seconds.
WINDOWS = {"daily": 86_400.0, "weekly": 7 * 86_400.0}


class SpendLimit(Budget):
    """A spend limit over rolling windows (the last 24 hours, the last 7 days) that outlives the
    kernel: what each submit reserved is appended to a small file, so a restart, another
    notebook or a script on the same machine counts against the same limit.

    ``SpendLimit(daily=100, weekly=400)``; use it like a budget: ``Client(budget=...)`` or
    ``with mediagen.budget(limit): ...``. ``path`` is where the spend is kept (default: one
    file in the cache folder for every client of this machine user); give each service its own
    path when spending on several (the sandbox's credits are not money). As with ``Budget``, a
    submit takes its estimate before it is sent, and the refund of a generation that later fails
    is not given back (the limit errs on the side of spending less).
    """

    def __init__(
        self,
        *,
        daily: float | None = None,
        weekly: float | None = None,
        path: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        limits = {name: value for name, value in (("daily", daily), ("weekly", weekly))}
        self.limits = {name: credit_limit(name, v) for name, v in limits.items() if v is not None}
        if not self.limits:
            raise ValueError("give daily= and/or weekly= credits")
        super().__init__(min(self.limits.values()))
        if path is None:
            from mediagen.client._config import default_cache_dir

            path = default_cache_dir() / "spend-limit.jsonl"
        self.path = Path(path).expanduser()
        self._clock = clock

    # Budget's interface, over the windows ------------------------------------------------

    @property  # type: ignore[override]
    def spent(self) -> float:
        """Spent in the shortest window (what ``remaining`` is measured against)."""
        window = min(self.limits, key=WINDOWS.__getitem__)
        return self.spent_in(window)

    @spent.setter
    def spent(self, value: float) -> None:  # Budget.__init__ sets it; the file is the truth
        pass

    @property
    def remaining(self) -> float:
        """Credits left in the tightest window (what the next submit is measured against)."""
        return min(round(limit - self.spent_in(w), 2) for w, limit in self.limits.items())

    def spent_in(self, window: str) -> float:
        """Credits spent in ``window``: ``"daily"`` (the last 24 hours) or ``"weekly"`` (the last
        7 days)."""
        since = self._clock() - WINDOWS[window]
        return round(sum(c for t, c in self._entries() if t > since), 2)

    def reserve(self, credits: float) -> None:
        credits = credit_limit("the estimate", credits)
        with self._lock, ledger.locked(self.path) as handle:
            entries = ledger.read_entries(handle)
            now = self._clock()
            for window, limit in self.limits.items():
                spent = sum(c for t, c in entries if t > now - WINDOWS[window])
                remaining = round(limit - spent, 2)
                if credits > remaining + 1e-9:
                    raise SpendLimitExceededError(credits, remaining, limit, window)
            ledger.append_entry(handle, now, credits)

    def release(self, credits: float) -> None:
        with self._lock, ledger.locked(self.path) as handle:
            ledger.append_entry(handle, self._clock(), -credits)

    def _entries(self) -> list[tuple[float, float]]:
        with self._lock, ledger.locked(self.path) as handle:
            return ledger.read_entries(handle)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{w}: {self.spent_in(w):g} of {limit:g}" for w, limit in self.limits.items()
        )
        return f"SpendLimit({shown})"

"""``CreditMeter``: balance, the member cap (used / limit, reset time) and this session's spend.

The balance has one home, :class:`Balance`, shared by the meter and the live estimate: every
answer that states a balance (the credits endpoint, an estimate, a 402 refusal) is offered to
it, the newest request wins, and both widgets show what it holds. So the meter and the estimate
never show two different balances, and "affordable" is always judged against that one figure.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import traitlets

from mediagen.display._html import credits_text, plural
from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._loop_client import on_loop
from mediagen.widgets._snapshot import StaticFallback

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Client, Generation


class Balance(traitlets.HasTraits):
    """The credits the key can spend now, as last stated by the service."""

    #: the last credits answer, with ``balance`` replaced by any newer figure
    credits = traitlets.Dict()
    refreshing = traitlets.Bool(False)

    def __init__(self, client: Client | AsyncClient, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client
        self._asked_at = float("-inf")

    @property
    def available(self) -> float | None:
        value = self.credits.get("balance")
        return None if value is None else float(value)

    @staticmethod
    def now() -> float:
        """The stamp to take when sending a request whose answer states a balance."""
        return time.monotonic()

    def offer(self, balance: float | None, asked_at: float) -> None:
        """A balance the service stated in answer to a request sent at ``asked_at``.

        An answer to an older request than the one shown is ignored (it is stale).
        """
        if balance is None or asked_at < self._asked_at:
            return
        self._asked_at = asked_at
        if self.credits.get("balance") != balance:
            self.credits = {**self.credits, "balance": balance}

    def refresh(self, reporter: _tasks.Reporter | None = None) -> _tasks.Handle:
        """Ask the credits endpoint again, in the background."""
        self.refreshing = True

        async def run() -> None:
            asked_at = self.now()
            try:
                credits = await on_loop(self.client).credits.get()
            finally:
                self.refreshing = False
            if asked_at >= self._asked_at:
                self._asked_at = asked_at
                self.credits = credits.to_dict()  # the trait holds the JSON, as it came

        return _tasks.spawn(run(), reporter=reporter)


class CreditMeter(StaticFallback, MediagenWidget):
    """Refreshed on demand and after each completed generation (:meth:`generation_finished`)."""

    _module = "credits.js"

    credits = traitlets.Dict().tag(sync=True)
    session_spend = traitlets.Float(0.0).tag(sync=True)
    session_count = traitlets.Int(0).tag(sync=True)
    refreshing = traitlets.Bool(False).tag(sync=True)
    #: the client's own spend limits (``SpendLimit`` windows or a ``Budget``), as
    #: ``{"name", "spent", "limit"}``: what is left of them is money the user set aside
    limits = traitlets.List(traitlets.Dict()).tag(sync=True)

    def __init__(
        self, client: Client | AsyncClient, *, balance: Balance | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.balance = balance or Balance(client)
        traitlets.dlink((self.balance, "credits"), (self, "credits"))
        traitlets.dlink((self.balance, "refreshing"), (self, "refreshing"))
        self._counted: set[str] = set()
        self.on_msg(lambda _w, content, _b: content == {"action": "refresh"} and self.refresh())

    def refresh(self) -> _tasks.Handle:
        """Fetch the balance again, in the background."""
        self.clear_error()
        self.limits = spend_limits(self.client)
        return self.balance.refresh(reporter=lambda exc: self.report(exc, context="Credits"))

    def generation_finished(self, generation: Generation[Any]) -> _tasks.Handle:
        """Count a finished generation's charge into the session once, then refresh."""
        generation_id, charged = generation.id, generation.credits_charged
        if generation_id not in self._counted and charged is not None:
            self._counted.add(generation_id)
            self.session_spend = round(self.session_spend + float(charged), 2)
            self.session_count += 1
        return self.refresh()

    def snapshot_text(self) -> str:
        balance = self.credits.get("balance")
        parts = ["Credits: " + ("…" if balance is None else f"{credits_text(balance)} available")]
        parts += [
            f"{x['name']} {credits_text(x['spent'])} of {credits_text(x['limit'])}"
            for x in self.limits
        ]
        parts.append(
            f"this session {credits_text(self.session_spend)} credits on "
            f"{plural(self.session_count, 'generation')}"
        )
        return " · ".join(parts)


def spend_limits(client: Client | AsyncClient) -> list[dict[str, Any]]:
    """The spend limits set on ``client`` (``Client(budget=...)``), for the meter."""
    from mediagen.client import Budget, SpendLimit

    found = client.budget
    if isinstance(found, SpendLimit):
        return [
            {
                "name": f"{window.capitalize()} limit",
                "spent": found.spent_in(window),
                "limit": limit,
            }
            for window, limit in found.limits.items()
        ]
    if isinstance(found, Budget):
        return [{"name": "Budget", "spent": found.spent, "limit": found.limit}]
    return []

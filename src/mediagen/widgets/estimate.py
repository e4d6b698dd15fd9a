"""``LiveEstimate``: the price of the form's request as it changes, and the Submit button.

As the user types or drags, the price is computed at once from the catalog entry's price
tables (``provisional``, shown marked as such; unknown where it depends on an input file only
the service measures), then confirmed by the service's estimate, which is debounced and
"latest wins" (a slow, stale answer never replaces a fresh one). The service's figure is the
price: when it differs from the provisional one, the difference is shown beside it.
Submit is enabled only when the form is valid and a fresh estimate says the request is allowed
and affordable; otherwise ``blocked_reason`` says why, next to the disabled button.

The balance and "affordable" come from the :class:`~mediagen.widgets.credits.Balance` shared
with the credit meter: the service's price, judged against the one balance both widgets show.
An invalid form shows no price; a refusal for credits (402) says what the request needs and what
is available, and updates the balance, so the estimate says "not affordable" until a top-up,
and its message goes away after a top-up, an edit or a reload of the page.

One click is one submission: the view sends a new ``click`` id per click, each click id gets its
own idempotency key (a re-delivered click reuses it), and a click while a submission is in
flight is ignored, so a double click charges once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import traitlets

from mediagen.client import PaymentRequiredError
from mediagen.client._submit import new_idempotency_key
from mediagen.display._html import credits_text
from mediagen.pricing._local_price import local_price
from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._loop_client import on_loop
from mediagen.widgets._snapshot import StaticFallback
from mediagen.widgets.credits import Balance
from mediagen.widgets.form import RequestForm

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Client, Estimate, Generation

#: (generation, request, estimate): after each accepted submission
Submitted = Callable[["Generation[AsyncClient]", dict[str, Any], dict[str, Any]], None]


class LiveEstimate(StaticFallback, MediagenWidget):
    _module = "estimate.js"

    status = traitlets.Unicode("idle").tag(sync=True)  # idle | estimating | ready | error
    estimate = traitlets.Dict().tag(sync=True)
    # the price computed locally for the form's current request: credits (None when unknown,
    # with the reason), billable_duration_seconds, credits_after_discount (at the discount
    # the service last quoted)
    provisional = traitlets.Dict().tag(sync=True)
    # the provisional price of each choice of a priced field (one changed at a time): the view
    # shows the one a user picks before the kernel answers; ``seq`` moves with every request
    choice_prices = traitlets.Dict().tag(sync=True)
    form_token = traitlets.Unicode("").tag(sync=True)  # the form whose edits the view follows
    blocked_reason = traitlets.Unicode("Choose a model").tag(sync=True)
    click = traitlets.Unicode("").tag(sync=True)
    submitting = traitlets.Bool(False).tag(sync=True)
    submitted_count = traitlets.Int(0).tag(sync=True)

    def __init__(
        self,
        client: Client | AsyncClient,
        form: RequestForm,
        *,
        debounce: float = 0.3,
        balance: Balance | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.client = client
        self.form = form
        self.balance = balance or Balance(client)
        self._quote: dict[str, Any] = {}  # the service's last estimate, as it came
        self._discount: float | None = None  # the organization's, as the service last quoted
        self.balance.observe(self._on_balance, names="credits")
        self.on_msg(self._on_view_message)
        self._latest = _tasks.Latest(debounce, self._deliver, self._estimate_failed)
        self._request_estimated: dict[str, Any] | None = None
        self._keys: dict[str, str] = {}
        self._listeners: list[Submitted] = []
        self.last_generation: Generation[AsyncClient] | None = None
        self._priced = 0  # requests priced so far (``choice_prices``'s ``seq``)
        self.form_token = form.token
        form.observe(self._on_form, names=["values", "mode", "chosen_model", "issues"])
        form.on_edit_applied(self._on_edit_applied)
        self._on_form(None)

    def on_submitted(self, callback: Submitted) -> None:
        """Call ``callback(generation, request, estimate)`` after each accepted submission."""
        self._listeners.append(callback)

    # -- estimates -------------------------------------------------------------------------

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if content == {"action": "refresh"}:  # a view (re)appeared, e.g. after a page reload
            with self.reporting("Estimate"):
                self.refresh()

    def _on_form(self, change: Any) -> None:
        # One message to the view for the whole edit: the provisional price shows only with its
        # status, and on a kernel's websocket (Nagle's algorithm is on there) a second small
        # message can wait some 40 ms for the first one's acknowledgement.
        with self.hold_sync():
            self._request_estimated = None
            if change is not None and not self.submitting:
                self.clear_error()  # whatever it said was about the request before this edit
            if not self.form.chosen_model or self.form.issues:
                self.status, self._quote = "idle", {}  # no price for a request that cannot go
                self.provisional = {}
                self._show()
            else:
                request = self.form.request
                self.provisional = self._local(request)
                self.status = "estimating"
                self._latest.schedule(lambda: self._fetch(request))
            self._update_blocked()
        # after the message above: the next click's prices never hold this edit's price back
        self._priced += 1
        fields = self._choice_prices() if self.provisional else {}
        # with each field's value now: picking it again is no edit the kernel would price
        current = {name: self.form.values.get(name) for name in fields}
        self.choice_prices = {
            "seq": self._priced,
            "fields": fields,
            "current": current,
            "edit": self.form.last_edit,  # the view's picked price stands until this is its edit
        }

    def _on_edit_applied(self, edit_id: str | None) -> None:
        # an edit that changed nothing priced nothing: tell the view it was applied all the same
        if self.choice_prices.get("edit") != edit_id:
            self.choice_prices = {**self.choice_prices, "edit": edit_id}

    def _choice_prices(self) -> dict[str, list[list[Any]]]:
        """Each choice's provisional price, for the fields whose choices differ in price."""
        priced: dict[str, list[list[Any]]] = {}
        for name, options in self.form.choices():
            shown = [[value, self._local(self.form.request_with(name, value))] for value in options]
            known = [price["credits"] for _, price in shown if price["credits"] is not None]
            if len(set(known)) > 1:
                priced[name] = [pair for pair in shown if pair[1]["credits"] is not None]
        return priced

    def _local(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.form.entry is not None
        found = local_price(self.form.entry, request)
        shown: dict[str, Any] = {
            "credits": found.credits,
            "billable_duration_seconds": found.billable_duration_seconds,
            "unknown": found.unknown,
        }
        discount = self._discount
        if found.credits is not None and discount is not None:
            shown["credits_after_discount"] = round(found.credits * (1 - discount / 100), 2)
        return shown

    @property
    def difference(self) -> float | None:
        """Service price minus the provisional one, once the service answered (None: same, or
        nothing to compare)."""
        local, service = self.provisional.get("credits"), self.estimate.get("credits")
        if self.status != "ready" or local is None or service is None or local == service:
            return None
        return round(float(service) - float(local), 2)

    async def _fetch(self, request: dict[str, Any]) -> tuple[dict[str, Any], Estimate]:
        asked_at = self.balance.now()
        estimate = await on_loop(self.client).models.estimate_request(request)
        self.balance.offer(estimate.balance, asked_at)
        return request, estimate

    def _show(self) -> None:
        """The quote, judged against the shared balance (the one the meter shows)."""
        shown = dict(self._quote)
        available = self.balance.available
        if shown and available is not None:
            shown["balance"] = available
            shown["can_afford"] = available >= float(shown.get("credits_after_discount") or 0)
        self.estimate = shown

    def _on_balance(self, change: Any) -> None:
        before = (change["old"] or {}).get("balance")
        self._show()
        if before is not None and self.balance.available != before and not self.submitting:
            self.clear_error()  # a refusal for credits is stale once the balance moved
        self._update_blocked()

    def _deliver(self, result: tuple[dict[str, Any], Estimate]) -> None:
        request, estimate = result
        # one message to the view: "ready" beside the previous quote would show, for a moment,
        # the old price as the service's answer to this request
        with self.hold_sync():
            self.clear_error()
            if getattr(self, "_dropped_click", False):
                self._dropped_click = False
                self.error = (
                    "Not sent: the form changed as you clicked. Check the new estimate, then "
                    "click Submit again."
                )
            self._request_estimated = request
            self._quote = estimate.to_dict()  # the trait shows the JSON, as it came
            # read from the JSON: a quote that names no discount leaves the last one standing
            self._discount = estimate.get("discount_percent", self._discount)
            self.status = "ready"
            self._show()
            self._update_blocked()

    def _estimate_failed(self, exc: BaseException) -> None:
        with self.hold_sync():
            self.status = "error"
            self.report(exc, context="Estimate failed")
            self._update_blocked()

    def refresh(self) -> _tasks.Handle | None:
        """Estimate again now (e.g. after the balance changed)."""
        self._on_form(None)
        return self._latest.latest

    @property
    def pending(self) -> _tasks.Handle | None:
        """The estimate in flight (tests await it instead of sleeping)."""
        return self._latest.latest

    def _update_blocked(self) -> None:
        self.blocked_reason = self._why_blocked()

    def _why_blocked(self) -> str:
        if not self.form.chosen_model:
            return "Choose a model"
        if self.form.issues:
            first = next(iter(self.form.issues.values()))
            return f"Fix the form: {first}"
        if self.submitting:
            return "Submitting…"
        if self.status == "error":
            return "No estimate: see the error above"
        if self.status != "ready" or self._request_estimated is None:
            return "Waiting for the estimate…"
        if not self.estimate.get("allowed", True):
            return (
                f"Not allowed: {self.estimate.get('reason') or 'your plan cannot use this model'}"
            )
        if not self.estimate.get("can_afford", True):
            return (
                f"Not enough credits: {self.estimate.get('credits_after_discount')} needed, "
                f"{self.estimate.get('balance')} available"
            )
        return ""

    # -- submitting ------------------------------------------------------------------------

    @traitlets.observe("click")
    def _on_click(self, change: Any) -> None:
        click_id = change["new"]
        if not click_id:
            return
        if self.submitting or self.blocked_reason:
            # a second click of a double click, or a click the view should not send. A click
            # that raced a form change is not sent either (its price was never shown), but
            # the user is told once the new estimate is in, rather than left wondering.
            if not self.submitting and self.status == "estimating":
                self._dropped_click = True
            return
        key = self._keys.setdefault(click_id, new_idempotency_key())
        request = dict(self._request_estimated or self.form.request)
        estimate = dict(self.estimate)
        self.submitting = True
        self._update_blocked()
        _tasks.spawn(self._submit(request, estimate, key), reporter=self._submit_failed)

    def submit(self) -> None:
        """Submit as if the button were clicked once (from Python)."""
        self.click = uuid.uuid4().hex

    async def _submit(self, request: dict[str, Any], estimate: dict[str, Any], key: str) -> None:
        kind = self.form.entry["type"] if self.form.entry else "image"
        resource = on_loop(self.client).resource(kind)
        generation = await resource.create(**{**request, "idempotency_key": key})
        self.last_generation = generation
        self.submitting = False
        self.submitted_count += 1
        self.clear_error()
        self._update_blocked()
        for callback in self._listeners:
            with self.reporting("After submit"):
                callback(generation, request, estimate)
        self.refresh()  # the balance changed

    def _submit_failed(self, exc: BaseException) -> None:
        self.submitting = False
        if isinstance(exc, PaymentRequiredError):
            # the balance fell since the estimate: take the service's figure, then ask again
            self.balance.offer(exc.available, self.balance.now())
            self.balance.refresh(reporter=lambda e: self.report(e, context="Credits"))
            figures = f"this request {exc.shortfall}. " if exc.shortfall else ""
            self.error = (
                f"Not sent: {figures}{exc.message} Nothing was charged. Top up (then refresh "
                "the credits) or change the request."
            )
        else:
            self.report(exc, context="Submit failed")
        self._update_blocked()

    @property
    def generation_id(self) -> str | None:
        """The id of the generation last submitted from this estimate, if any."""
        return self.last_generation.id if self.last_generation is not None else None

    def snapshot_text(self) -> str:
        price = self.estimate.get("credits_after_discount")
        if self.status != "ready" or price is None:
            return f"Estimate: {self.blocked_reason or self.status}"
        text = f"Estimate: {credits_text(price)} credits for {self.estimate.get('model', '')}"
        return text + ("" if self.estimate.get("can_afford", True) else " (not affordable)")

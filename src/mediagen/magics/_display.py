"""What the magics show: small objects with a text and an HTML repr.

Text reprs make the magics readable in a terminal IPython and in tests; HTML reprs look native in
JupyterLab (JupyterLab CSS variables with fallbacks) and survive in a saved notebook. Prices are
shown as the service states them (credits, the discount, the after-discount price), never
re-rounded.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mediagen.display._html import plural
from mediagen.wire._fields import read_field

if TYPE_CHECKING:
    from mediagen.client import Credits, Estimate

_BOX = (
    "font-family: var(--jp-ui-font-family, sans-serif); font-size: var(--jp-ui-font-size1, 13px);"
    " color: var(--jp-ui-font-color1, inherit); border-left: 3px solid {color};"
    " padding: 2px 8px; margin: 2px 0"
)
_COLORS = {
    "info": "var(--jp-brand-color1, #1976d2)",
    "ok": "var(--jp-success-color1, #388e3c)",
    "warn": "var(--jp-warn-color1, #f57c00)",
    "error": "var(--jp-error-color1, #d32f2f)",
}


def credits_text(value: Any) -> str:
    """A credit amount as the service states it: ``36``, ``36.5``, ``12.34`` (no re-rounding)."""
    if value is None:
        return "?"
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


class Notice:
    """A one-paragraph message (info, ok, warn, error) for the user."""

    def __init__(self, text: str, level: str = "info") -> None:
        self.text = text
        self.level = level

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        style = _BOX.format(color=_COLORS.get(self.level, _COLORS["info"]))
        body = html.escape(self.text).replace("\n", "<br>")
        return f'<div class="mediagen-notice mediagen-{self.level}" style="{style}">{body}</div>'


def _settings(request: Mapping[str, Any], text_field: str) -> list[tuple[str, Any]]:
    skip = {"model", "mode", text_field, "idempotency_key"}
    return [(k, v) for k, v in request.items() if k not in skip]


class EstimateView:
    """The quote shown before anything is spent."""

    def __init__(
        self, request: Mapping[str, Any], estimate: Estimate, text_field: str = "prompt"
    ) -> None:
        self.request = dict(request)
        self.estimate = estimate
        self.text_field = text_field

    @property
    def credits(self) -> float | None:
        return self.estimate.credits

    @property
    def after_discount(self) -> float | None:
        return self.estimate.credits_after_discount

    def _what(self) -> str:
        what = str(self.request.get("model"))
        if self.request.get("mode"):
            what += f" · {self.request['mode']}"
        duration = self.estimate.billable_duration_seconds
        if duration is not None:
            what += f" · {credits_text(duration)} s billable"
        return what

    def _price(self) -> str:
        discount = self.estimate.discount_percent or 0
        price = f"{credits_text(self.credits)} credits"
        if discount:
            price += (
                f", {credits_text(discount)}% discount: {credits_text(self.after_discount)} credits"
            )
        return price

    def _verdict(self) -> str:
        if self.estimate.allowed is False:
            return f"not allowed: {self.estimate.reason or 'the plan cannot use it'}"
        if self.estimate.can_afford is False:
            return f"cannot afford (balance {credits_text(self.estimate.balance)})"
        return f"balance {credits_text(self.estimate.balance)}"

    def __repr__(self) -> str:
        return f"Estimate for {self._what()}: {self._price()} ({self._verdict()})"

    def _repr_html_(self) -> str:
        ok = self.estimate.allowed is not False and self.estimate.can_afford
        style = _BOX.format(color=_COLORS["info" if ok else "error"])
        settings = ", ".join(
            f"{html.escape(str(k))}={html.escape(str(v))}"
            for k, v in _settings(self.request, self.text_field)
        )
        return (
            f'<div class="mediagen-estimate" style="{style}">'
            f"<b>Estimate</b> for {html.escape(self._what())}: "
            f"<b>{html.escape(self._price())}</b> ({html.escape(self._verdict())})"
            + (f'<div style="opacity: 0.75">{settings}</div>' if settings else "")
            + "</div>"
        )


def models_table(entries: Sequence[Mapping[str, Any]]) -> Any:
    """The catalog as a pandas DataFrame, one row per model (pandas imported here, lazily)."""
    import pandas as pd

    rows = []
    for entry in entries:
        modes = [str(m.get("id")) for m in entry.get("modes") or ()]
        tiers = [str(t.get("id")) for t in entry.get("tiers") or ()]
        rows.append(
            {
                "id": entry.get("id"),
                "type": entry.get("type"),
                "audio_kind": entry.get("audio_kind"),
                "name": entry.get("name"),
                "modes": ", ".join(modes),
                "tiers": ", ".join(tiers),
                "price": entry.get("price_summary"),
                "plans": ", ".join(entry.get("plans") or ()),
            }
        )
    columns = ["id", "type", "audio_kind", "name", "modes", "tiers", "price", "plans"]
    frame = pd.DataFrame(rows, columns=columns)
    if frame["audio_kind"].isna().all():
        frame = frame.drop(columns="audio_kind")
    else:  # only audio models have a kind: the others show blank, not NaN
        frame["audio_kind"] = frame["audio_kind"].fillna("")
    return frame.set_index("id")


class CreditsView:
    """Balance, reservations, plan and discount, and the member cap when one applies."""

    def __init__(self, credits: Credits) -> None:
        self.credits = credits

    def _lines(self) -> list[tuple[str, str]]:
        c = self.credits
        lines = [
            ("balance", credits_text(c.balance)),
            ("reserved", credits_text(c.reserved or 0)),
        ]
        if c.organization_balance is not None:
            lines.append(("organization balance", credits_text(c.organization_balance)))
        if c.plan:
            lines.append(("plan", str(c.plan)))
        lines.append(("discount", f"{credits_text(c.discount_percent or 0)}%"))
        limit = c.member_limit
        if limit:
            lines.append(
                (
                    "member cap",
                    f"{credits_text(limit.used)} used of {credits_text(limit.limit)}, "
                    f"{credits_text(limit.remaining)} left, resets {limit.resets_at}",
                )
            )
        return lines

    def __repr__(self) -> str:
        return "\n".join(f"{name:>20}: {value}" for name, value in self._lines())

    def _repr_html_(self) -> str:
        return table_html("Credits", self._lines())


def table_html(title: str, rows: Iterable[tuple[str, str]]) -> str:
    cells = "".join(
        f'<tr><th style="text-align: left; padding-right: 1em">{html.escape(k)}</th>'
        f'<td style="text-align: left">{html.escape(v)}</td></tr>'
        for k, v in rows
    )
    style = _BOX.format(color=_COLORS["info"])
    return (
        f'<div class="mediagen-table" style="{style}"><b>{html.escape(title)}</b>'
        f"<table>{cells}</table></div>"
    )


class HistorySummary:
    """``%mediagen history``: headline numbers, spend by model and by day."""

    def __init__(self, frame: Any, since: str | None) -> None:
        from mediagen import history

        self.frame = frame
        self.since = since
        self.headline = history.headline(frame)
        self.by_model = history.spend_by_model(frame)
        self.by_day = history.spend_by_period(frame, "D")

    def _title(self) -> str:
        scope = f" in the last {self.since}" if self.since else ""
        h = self.headline
        rate = h["failure_rate"]
        rate_text = "n/a" if rate != rate else f"{rate:.0%}"  # NaN when nothing finished
        return (
            f"{plural(h['generations'], 'generation')}{scope}: "
            f"{credits_text(h['spent'])} credits spent, "
            f"{h['completed']} completed, {h['failed']} failed ({rate_text} failure rate), "
            f"{h['pending']} pending"
        )

    def __repr__(self) -> str:
        return (
            f"{self._title()}\n\nSpend by model:\n{self.by_model.to_string()}"
            f"\n\nSpend by day:\n{self.by_day.to_string()}"
        )

    def _repr_html_(self) -> str:
        return (
            f"<div class='mediagen-history'><p><b>{html.escape(self._title())}</b></p>"
            f"<p>Spend by model</p>{self.by_model.to_html()}"
            f"<p>Spend by day</p>{self.by_day.to_html()}</div>"
        )


def api_error_text(exc: Exception) -> str | None:
    """A readable message for a client error (status, code, message, field details), else None."""
    from mediagen.client import MediagenError

    if not isinstance(exc, MediagenError):
        return None
    status = getattr(exc, "status", None)
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc)
    head = " ".join(str(p) for p in (status, code) if p)
    lines = [f"{head}: {message}" if head else message]
    shortfall = getattr(exc, "shortfall", None)
    if isinstance(shortfall, str):
        lines.append(f"  this request {shortfall}")
    for detail in getattr(exc, "details", None) or ():
        loc = read_field(detail, "loc") or ()
        where = ".".join(str(p) for p in loc if p not in ("body", "query"))
        lines.append(f"  {where or '(request)'}: {read_field(detail, 'msg')}")
    trace = getattr(exc, "trace_id", None)
    if trace:
        lines.append(f"(trace id {trace})")
    return "\n".join(lines)

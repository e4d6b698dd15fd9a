"""``PlanView``: a table's plan as a small widget, the way a plan shows in a notebook.

It shows what the plan knows before anything runs: the total (credits, as the service stated
them), rows and credits per model and mode, the forecast from this client's history (or why
there is none), the first rows (label, what each asks for, its estimate), the run id, and the
rows ``on_invalid="skip"`` left out. Running stays ``plan.run(...)`` in Python, so the view has
no controls. Its snapshot is the plan's own static HTML (``Plan._repr_html_``'s), so a saved
notebook shows the same figures where no widget runs.

Loading this module registers the view with the plan's display hook (``Plan`` sits a floor
below and loads it by name).
"""

from __future__ import annotations

from typing import Any

import traitlets

from mediagen.datasets import _display_hook
from mediagen.datasets._view import SAMPLE_ROWS, forecast_text, invalid_rows, plan_html
from mediagen.display._progress import format_seconds
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._snapshot import StaticFallback, price_settings

#: a request's prompt or text is cut to this many characters in a row's summary
SUMMARY_CHARS = 60


class PlanView(StaticFallback, MediagenWidget):
    """What ``plan`` will send and cost; the figures are read once, when the view is made."""

    _module = "plan.js"

    total = traitlets.Float(0.0).tag(sync=True)
    rows = traitlets.Int(0).tag(sync=True)
    skipped = traitlets.Int(0).tag(sync=True)
    run_id = traitlets.Unicode("").tag(sync=True)
    #: ``{"model", "mode", "rows", "credits"}`` per model and mode
    counts = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: ``{"enough", "p50", "p90", "failures", "summary"}``: times as text, failures or None
    forecast = traitlets.Dict().tag(sync=True)
    #: the first rows: ``{"label", "summary", "estimate", "valid"}``
    sample = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: the rows left out: ``{"label", "problem"}``
    invalid = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: the last run's progress as it goes: rows done, failed, spent, time left and the key's
    #: pace once its rate limit holds the run (empty before a run)
    progress = traitlets.Unicode("").tag(sync=True)

    def __init__(self, plan: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.total = plan.total
        self.rows = len(plan.runnable)
        self.skipped = len(plan.requests) - self.rows
        self.run_id = str(plan.run_id)
        self.counts = [
            {"model": str(r.model), "mode": str(r.mode), "rows": int(r.rows),
             "credits": float(r.credits)}
            for r in plan.counts().reset_index().itertuples()
        ]  # fmt: skip
        self.forecast = _forecast(plan)
        self.sample = _sample(plan.requests)
        self.invalid = [
            {"label": str(label), "problem": problem} for label, problem in invalid_rows(plan)
        ]
        self._html = plan_html(plan, forecast=self.forecast["summary"])
        plan.watch_runs(self)

    def show_progress(self, line: str) -> None:
        """A run of the plan moved on (called from the run, in the kernel's thread)."""
        self.progress = line

    def snapshot_text(self) -> str:
        return repr(self.plan)

    def snapshot_html(self) -> str:
        return self._html


def _forecast(plan: Any) -> dict[str, Any]:
    try:
        found = plan.forecast()
    except Exception:  # no history store yet: the line says why
        return {"enough": False, "p50": "", "p90": "", "failures": None,
                "summary": forecast_text(plan)}  # fmt: skip
    enough = found.p50_seconds is not None
    return {
        "enough": enough,
        "p50": format_seconds(found.p50_seconds) if enough else "",
        "p90": format_seconds(found.p90_seconds) if found.p90_seconds is not None else "",
        "failures": found.expected_failures,
        "summary": str(found.summary()),
    }


def _sample(requests: Any) -> list[dict[str, Any]]:
    head = requests.head(SAMPLE_ROWS)
    valid = head["valid"] if "valid" in head.columns else [True] * len(head)
    return [
        {"label": str(label), "summary": request_summary(request), "estimate": float(estimate),
         "valid": bool(ok)}
        for label, request, estimate, ok in zip(
            head.index, head["request"], head["estimate"], valid, strict=True
        )
    ]  # fmt: skip


def request_summary(request: dict[str, Any]) -> str:
    """``pixel-1 · "a red mug" · quality=hd``: the model, the words and the priced settings."""
    words = request.get("prompt") or request.get("text") or ""
    words = str(words)
    if len(words) > SUMMARY_CHARS:
        words = words[: SUMMARY_CHARS - 1] + "…"
    parts = [str(request.get("model", ""))]
    if words:
        parts.append(f"“{words}”")
    parts += [f"{k}={v}" for k, v in price_settings(request).items()]
    return " · ".join(parts)


_display_hook.register(PlanView)

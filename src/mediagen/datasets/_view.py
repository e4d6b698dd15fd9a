"""A plan's static HTML: the total, rows and credits per model and mode, the forecast, the
first rows (the display helpers' boxes and escaping; no widget, so it shows in any frontend
and in a saved notebook)."""

from __future__ import annotations

from typing import Any

from mediagen.display._html import box, credits_text, escape, plural

#: rows of the table shown under the summary
SAMPLE_ROWS = 5


def forecast_text(plan: Any) -> str:
    """The forecast's one line, or why there is none (no history store yet: the plan shows)."""
    try:
        return str(plan.forecast().summary())
    except Exception as exc:
        return f"Forecast: not available ({type(exc).__name__})"


def plan_html(plan: Any, forecast: str | None = None) -> str:
    """``plan``: a ``Plan`` (read by its public parts only, so this module sits below it);
    ``forecast``: its forecast's line when the caller has it already."""
    runnable = plan.runnable
    skipped = len(plan.requests) - len(runnable)
    head = (
        f"<div><b>{credits_text(plan.total)} credits</b> for {plural(len(runnable), 'row')}"
        + (f", {plural(skipped, 'invalid row')} skipped" if skipped else "")
        + f" &middot; run_id <code>{escape(plan.run_id)}</code></div>"
    )
    counts = plan.counts().reset_index()
    per_model = "".join(
        f"<tr><td>{escape(r.model)}</td><td>{escape(r.mode)}</td>"
        f"<td style='text-align:right'>{int(r.rows):,}</td>"
        f"<td style='text-align:right'>{credits_text(r.credits)}</td></tr>"
        for r in counts.itertuples()
    )
    table = (
        "<table><tr><th>model</th><th>mode</th><th>rows</th><th>credits</th></tr>"
        f"{per_model}</table>"
    )
    forecast = escape(forecast_text(plan) if forecast is None else forecast)
    sample = plan.requests.drop(columns=["key"]).head(SAMPLE_ROWS).to_html()
    invalid = "".join(
        f"<li><code>{escape(str(label))}</code>: {escape(str(problem))}</li>"
        for label, problem in invalid_rows(plan)[:SAMPLE_ROWS]
    )
    body = head + table + f"<div>{forecast}</div>" + sample
    if invalid:
        body += f"<div>Skipped (invalid):</div><ul>{invalid}</ul>"
    return box("Table plan", body, kind="plan")


def invalid_rows(plan: Any) -> list[tuple[Any, str]]:
    """The rows ``on_invalid="skip"`` left out: each label with what is wrong with it."""
    requests = plan.requests
    if "valid" not in requests.columns:
        return []
    skipped = requests[~requests["valid"].astype(bool)]
    return [(label, str(problem)) for label, problem in skipped["problem"].items()]

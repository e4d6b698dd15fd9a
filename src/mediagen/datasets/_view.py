"""A plan's static HTML: the total, rows and credits per model and mode, the forecast, the
first rows (the display helpers' boxes and escaping; no widget, so it shows in any frontend
and in a saved notebook)."""

from __future__ import annotations

from typing import Any

from mediagen.display._html import box, credits_text, escape, plural

#: rows of the table shown under the summary
SAMPLE_ROWS = 5


def plan_html(plan: Any) -> str:
    """``plan``: a ``Plan`` (read by its public parts only, so this module sits below it)."""
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
    try:
        forecast = escape(plan.forecast().summary())
    except Exception as exc:  # no history store yet: the plan still shows
        forecast = escape(f"Forecast: not available ({type(exc).__name__})")
    sample = plan.requests.drop(columns=["key"]).head(SAMPLE_ROWS).to_html()
    return box("Table plan", head + table + f"<div>{forecast}</div>" + sample, kind="plan")

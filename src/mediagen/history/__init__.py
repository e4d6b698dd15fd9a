"""Past generations as a pandas DataFrame, spend summaries, plots and export.

pandas and matplotlib are imported only when a function here is first used, so
``import mediagen`` (and even ``import mediagen.history``) stays fast in a plain script.

Main entry points::

    from mediagen.history import generations_frame, spend_by_model
    df = generations_frame(client, type="video")        # or client.generations.to_dataframe()
    spend_by_model(df)
"""

from __future__ import annotations

import importlib
from typing import Any

from mediagen.client import _estimate_notes

# public name -> submodule that defines it (loaded on first attribute access)
_EXPORTS = {
    "generations_frame": "_frame",
    "frame_from_generations": "_frame",
    "frame_from_pages": "_frame",
    "update_frame": "_frame",
    "concat_history": "_frame",
    "join_journal": "_frame",
    "HistoryStore": "_store",
    "SyncResult": "_store",
    "stored_frame": "_store",
    "store_for": "_store",
    "sql": "_store",
    "export_team": "_store",
    "read_team": "_store",
    "forecast": "_forecast",
    "forecast_batch": "_forecast",
    "BatchForecast": "_forecast",
    "expected_seconds": "_forecast",
    "request_note": "_forecast",
    "journal_columns": "_journal_join",
    "HISTORY_COLUMNS": "_schema",
    "apply_history_dtypes": "_schema",
    "charged": "spend",
    "spend_by": "spend",
    "spend_by_model": "spend",
    "spend_by_type": "spend",
    "spend_by_status": "spend",
    "spend_by_period": "spend",
    "failures_by_model": "spend",
    "failures_by_code": "spend",
    "total_credits": "spend",
    "cycle_start": "spend",
    "cost_per_output": "spend",
    "cumulative_spend": "spend",
    "estimate_vs_charge": "spend",
    "headline": "spend",
    "plot_spend_over_time": "plots",
    "plot_spend_by_model": "plots",
    "plot_latency": "plots",
    "to_parquet": "export",
    "read_history_parquet": "export",
    "to_csv": "export",
    "read_history_csv": "export",
}

__all__ = sorted(_EXPORTS)


def _forecast_note(client: Any, items: list[Any]) -> str | None:
    from mediagen.history._forecast import batch_note

    return batch_note(client, items)


# Once history is in use, a batch's printed estimate also says how long it will likely take.
_estimate_notes.register(_forecast_note)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'mediagen.history' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

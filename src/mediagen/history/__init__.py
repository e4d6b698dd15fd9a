"""Past generations as a pandas DataFrame, spend summaries, plots and export.

pandas and matplotlib are imported only when a function here is first used, so
``import mediagen`` (and even ``import mediagen.history``) stays fast in a plain script.

Main entry points::

    from mediagen.history import generations_frame, spend_by_model
    df = generations_frame(client, type="video")        # or client.generations.to_dataframe()
    spend_by_model(df)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mediagen._lazy import lazy_exports
from mediagen.client import _hooks

# public name -> submodule that defines it (loaded on first attribute access)
_EXPORTS = {
    "generations_frame": "_frame",
    "frame_from_generations": "_frame",
    "frame_from_pages": "_frame",
    "update_frame": "_frame",
    "concat_history": "_frame",
    "join_journal": "_frame",
    "PageError": "_pages",
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

if TYPE_CHECKING:  # the names as type checkers and editors see them; loaded on first use
    from mediagen.client import AsyncClient, Client
    from mediagen.history._forecast import (
        BatchForecast as BatchForecast,
        expected_seconds as expected_seconds,
        forecast as forecast,
        forecast_batch as forecast_batch,
        request_note as request_note,
    )
    from mediagen.history._frame import (
        concat_history as concat_history,
        frame_from_generations as frame_from_generations,
        frame_from_pages as frame_from_pages,
        generations_frame as generations_frame,
        join_journal as join_journal,
        update_frame as update_frame,
    )
    from mediagen.history._journal_join import (
        journal_columns as journal_columns,
    )
    from mediagen.history._pages import (
        PageError as PageError,
    )
    from mediagen.history._schema import (
        HISTORY_COLUMNS as HISTORY_COLUMNS,
        apply_history_dtypes as apply_history_dtypes,
    )
    from mediagen.history._store import (
        HistoryStore as HistoryStore,
        SyncResult as SyncResult,
        export_team as export_team,
        read_team as read_team,
        sql as sql,
        store_for as store_for,
        stored_frame as stored_frame,
    )
    from mediagen.history.export import (
        read_history_csv as read_history_csv,
        read_history_parquet as read_history_parquet,
        to_csv as to_csv,
        to_parquet as to_parquet,
    )
    from mediagen.history.plots import (
        plot_latency as plot_latency,
        plot_spend_by_model as plot_spend_by_model,
        plot_spend_over_time as plot_spend_over_time,
    )
    from mediagen.history.spend import (
        charged as charged,
        cost_per_output as cost_per_output,
        cumulative_spend as cumulative_spend,
        cycle_start as cycle_start,
        estimate_vs_charge as estimate_vs_charge,
        failures_by_code as failures_by_code,
        failures_by_model as failures_by_model,
        headline as headline,
        spend_by as spend_by,
        spend_by_model as spend_by_model,
        spend_by_period as spend_by_period,
        spend_by_status as spend_by_status,
        spend_by_type as spend_by_type,
        total_credits as total_credits,
    )

__all__ = sorted(_EXPORTS)


def _forecast_note(client: Client | AsyncClient, items: list[Any]) -> str | None:
    from mediagen.history._forecast import batch_note

    return batch_note(client, items)


# Once history is in use, a batch's printed estimate also says how long it will likely take.
_hooks.add_estimate_note(_forecast_note)


def _table(client: Client, *, store: bool, sync: bool, rebuild: bool, **options: Any) -> Any:
    """``client.generations.to_dataframe()``: from the local store, or fetched directly (either
    client's table is built on a blocking one)."""
    if not store:
        from mediagen.history._frame import generations_frame

        return generations_frame(client, **options)
    from mediagen.history._store import stored_frame

    return stored_frame(client, sync=sync, rebuild=rebuild, **options)


_hooks.set_history_builder(_table)


__getattr__, __dir__ = lazy_exports(__name__, {n: f".{m}" for n, m in _EXPORTS.items()})

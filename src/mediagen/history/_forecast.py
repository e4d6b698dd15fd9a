"""Forecasts from your own history: how long a batch will take and how many items will fail.

The estimate endpoint says exactly what a batch costs; nothing on the service says how long it
will take or how often a model fails for you. Your settled history does: each past generation's
latency (``completed_at - created_at``) and outcome, per model (and mode, where the journal
remembers it). A forecast resamples those (a bootstrap): for every simulated run each job of the
batch draws a latency from its group's past ones, starts when its submit would be sent (at
``submit_rate`` submits per second, the per-key rate limit you see), and the batch is done when
its last job is. The p50 and p90 of many simulated runs are the forecast; the expected failures
are the sum of each group's past failure rate.

It says how many past generations it rests on, and falls back plainly where there are too few
(fewer than ``min_samples``): that group gets no time forecast, and the summary says why.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Client

#: Fewer settled generations than this in a group and it gets no forecast.
MIN_SAMPLES = 5


@dataclass(frozen=True)
class GroupForecast:
    """One model (and mode) of the batch: how many jobs, and what the history says of it."""

    model: str
    mode: str | None
    jobs: int
    based_on: int
    failure_rate: float | None
    median_latency_s: float | None

    @property
    def enough(self) -> bool:
        return self.based_on >= MIN_SAMPLES and self.median_latency_s is not None


@dataclass(frozen=True)
class BatchForecast:
    """Wall time (p50/p90, seconds, until every job is done) and failures expected."""

    jobs: int
    p50_seconds: float | None
    p90_seconds: float | None
    expected_failures: float | None
    groups: list[GroupForecast] = field(default_factory=list)

    @property
    def based_on(self) -> int:
        """How many past generations the forecast rests on."""
        return sum(g.based_on for g in self.groups)

    @property
    def missing(self) -> list[GroupForecast]:
        """Groups with too little history to forecast."""
        return [g for g in self.groups if not g.enough]

    def summary(self) -> str:
        """The forecast in one sentence (or why there is none yet)."""
        if self.p50_seconds is None:
            return (
                f"{_jobs(self.jobs)}: no time forecast yet ({self._why_not()}); "
                "the estimate above is still exact"
            )
        text = (
            f"{_jobs(self.jobs)}: all done in about {_duration(self.p50_seconds)} "
            f"(p90 {_duration(self.p90_seconds)})"
        )
        if self.expected_failures is not None:
            text += f", {self.expected_failures:.1f} failures expected"
        text += f"; from {self.based_on} past generations of yours"
        if self.missing:
            text += f" (not counted: {self._why_not()})"
        return text

    def _why_not(self) -> str:
        parts = [
            f"{_name(g)} has {g.based_on} past generation{'s' if g.based_on != 1 else ''}, "
            f"needs {MIN_SAMPLES}"
            for g in self.missing
        ]
        return "; ".join(parts) or "no history"

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return f"<div class='mediagen-forecast'>{html.escape(self.summary())}</div>"


def forecast_batch(
    requests: Iterable[Mapping[str, Any]] | Mapping[str, Any],
    history: pd.DataFrame,
    *,
    count: int | None = None,
    submit_rate: float | None = None,
    simulations: int = 2000,
    seed: int | None = 0,
) -> BatchForecast:
    """Forecast a batch of ``requests`` (or ``count`` copies of one) from a history frame.

    ``history`` is a frame of ``client.generations.to_dataframe()``; ``submit_rate`` is how
    many submits per second go out (None: all at once).
    """
    if isinstance(requests, Mapping):
        requests = [requests] * (count or 1)
    requests = list(requests)
    settled = history[history["status"].astype(object).isin(["completed", "failed"])]
    groups = [_group(settled, model, mode, jobs) for (model, mode), jobs in _tally(requests)]
    enough = [g for g in groups if g.enough]
    p50 = p90 = None
    if enough:
        walls = _simulate(settled, groups, submit_rate, simulations, np.random.default_rng(seed))
        p50, p90 = (float(v) for v in np.percentile(walls, [50, 90]))
    failures = None
    if groups and all(g.failure_rate is not None for g in groups):
        failures = float(sum(g.jobs * (g.failure_rate or 0.0) for g in groups))
    return BatchForecast(len(requests), p50, p90, failures, groups)


def forecast(
    requests: Iterable[Mapping[str, Any]] | Mapping[str, Any],
    client: Client | AsyncClient,
    *,
    count: int | None = None,
    submit_rate: float | None = None,
    sync: bool = True,
) -> BatchForecast:
    """``forecast_batch`` over the client's own history (synced first unless ``sync=False``)."""
    history = client.generations.to_dataframe(sync=sync)
    return forecast_batch(requests, history, count=count, submit_rate=submit_rate)


#: Said before a purchase when there is no store yet (rather than fetch a whole history then).
NO_HISTORY_NOTE = (
    "Forecast: no local history yet (client.generations.to_dataframe() or %mediagen history "
    "builds it; then estimates say how long jobs usually take)"
)


def batch_note(client: Client | AsyncClient, items: list[Any]) -> str | None:
    """The forecast line printed under a batch's estimate (``client.submit_batch``).

    It reads the local history store, synced first when one exists (cheap: only what is new);
    without a store it says how to make one rather than fetch a whole history before a batch.
    """
    sync_client = client._sync_twin()
    if _store_of(sync_client) is None:
        return NO_HISTORY_NOTE
    requests = [item.request for item in items if getattr(item, "error", None) is None]
    if not requests:
        return None
    return "Forecast: " + forecast(requests, sync_client).summary()


def request_note(
    client: Client | AsyncClient, request: Mapping[str, Any], *, sync: bool = True
) -> str:
    """The forecast line shown beside one request's exact price, before it is paid (the
    magics' confirmation, the studio's estimate).

    Reads only the store's settled generations of the request's model; ``sync`` first fetches
    what is new into an existing store (never a whole first fetch before a purchase).
    """
    store = _store_of(client)
    if store is None:
        return NO_HISTORY_NOTE
    if sync:
        store.sync(client)
    rows = _model_rows(store, str(request.get("model")))
    return "Forecast: " + forecast_batch([request], rows).summary()


def expected_seconds(
    client: Client | AsyncClient, model: str | None, mode: str | None = None
) -> float | None:
    """How long one generation of ``model`` usually takes for this user (a progress display's
    scale), or None when nothing says.

    From the local history store when it knows enough of that model's generations: the
    forecast's p50 for one job over its settled ones (from every machine the key was used on).
    Otherwise (no store yet, or fewer than ``MIN_SAMPLES`` stored) the request journal's median
    on this machine. Never syncs: a progress bar must not fetch a history; the store is read
    once per sync.
    """
    if not model:
        return None
    store = _store_of(client)
    from_store = _store_p50(store, model, mode) if store is not None else None
    if from_store is not None:
        return from_store
    from mediagen.display._progress import expected_seconds as from_journal

    return from_journal(getattr(client, "journal", None), model)


def _store_p50(store: Any, model: str, mode: str | None) -> float | None:
    return forecast_batch({"model": model, "mode": mode}, _model_rows(store, model)).p50_seconds


def _model_rows(store: Any, model: str) -> pd.DataFrame:
    """The store's settled generations of ``model`` (the columns a forecast reads), read once
    per sync: progress bars and live estimates ask often, the store changes only on a sync."""
    from mediagen.display._progress import _file_version

    key = (str(store.root), _file_version(store.root / "state.json"), model)
    rows = _rows_cache.get(key)
    if rows is None:
        if len(_rows_cache) >= 16:
            _rows_cache.clear()
        rows = _rows_cache[key] = _settled_rows(store, model)
    return rows


#: (store, state version, model) -> that model's settled rows
_rows_cache: dict[tuple[Any, ...], pd.DataFrame] = {}


def _store_of(client: Client | AsyncClient) -> Any:
    """The client's history store when it holds settled generations, else None."""
    from mediagen.history._store import store_for

    store = store_for(client)
    return store if store is not None and store.segments() else None


def _settled_rows(store: Any, model: str) -> pd.DataFrame:
    """The store's settled generations of ``model`` (only the columns a forecast reads)."""
    con = store.connect()
    try:
        query = (
            "SELECT model, mode, status, latency_s FROM generations "
            "WHERE model = ? AND status IN ('completed', 'failed')"
        )
        return con.execute(query, [model]).df()
    finally:
        con.close()


def _tally(requests: list[Mapping[str, Any]]) -> list[tuple[tuple[str, str | None], int]]:
    counts: dict[tuple[str, str | None], int] = {}
    for request in requests:
        key = (str(request.get("model")), request.get("mode"))
        counts[key] = counts.get(key, 0) + 1
    return list(counts.items())


def _rows(settled: pd.DataFrame, model: str, mode: str | None) -> pd.DataFrame:
    """Past generations of ``model`` (of ``mode`` too, where the history knows modes)."""
    rows = settled[settled["model"].astype(object) == model]
    if mode is not None and "mode" in rows and rows["mode"].notna().any():
        rows = rows[rows["mode"].astype(object) == mode]
    return rows


def _group(settled: pd.DataFrame, model: str, mode: str | None, jobs: int) -> GroupForecast:
    rows = _rows(settled, model, mode)
    latencies = _latencies(rows)
    failed = int((rows["status"].astype(object) == "failed").sum())
    return GroupForecast(
        model=model,
        mode=mode,
        jobs=jobs,
        based_on=len(rows),
        failure_rate=failed / len(rows) if len(rows) else None,
        median_latency_s=float(np.median(latencies)) if len(latencies) else None,
    )


def _latencies(rows: pd.DataFrame) -> np.ndarray:
    done = rows[rows["status"].astype(object) == "completed"]
    values = done["latency_s"].to_numpy(dtype="float64", na_value=np.nan)
    return values[np.isfinite(values) & (values >= 0)]


def _simulate(
    settled: pd.DataFrame,
    groups: list[GroupForecast],
    submit_rate: float | None,
    simulations: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Wall time of ``simulations`` resampled runs of the batch (jobs of groups with history)."""
    walls = np.zeros(simulations)
    start = 0
    for group in groups:
        if not group.enough:
            continue
        past = _latencies(_rows(settled, group.model, group.mode))
        draws = rng.choice(past, size=(simulations, group.jobs), replace=True)
        if submit_rate:
            draws = draws + (start + np.arange(group.jobs)) / submit_rate
        walls = np.maximum(walls, draws.max(axis=1))
        start += group.jobs
    return walls


def _jobs(count: int) -> str:
    return f"{count} job{'s' if count != 1 else ''}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _name(group: GroupForecast) -> str:
    return group.model + (f" ({group.mode})" if group.mode else "")

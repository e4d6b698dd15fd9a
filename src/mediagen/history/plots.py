"""Plots of a history frame, drawn by pandas with matplotlib (imported on first use).

Each function draws on ``ax`` (a new figure when None) and returns the Axes, so it composes
with the user's own figure layout and with the spend dashboard (which renders off-screen).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from mediagen.history import spend


def _axes(ax: Any, figsize: tuple[float, float] = (7, 3.5)) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _legend_beside(ax: Any, title: str) -> None:
    """The legend to the right of the plot, never over the bars."""
    ax.legend(
        title=title, fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1)
    )


def _empty(ax: Any, title: str) -> Any:
    ax.set_title(title)
    ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, alpha=0.6)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def plot_spend_over_time(
    frame: pd.DataFrame, freq: str = "D", by: str = "model", ax: Any = None
) -> Any:
    """Credits charged per day (or ``"W"`` week, ``"M"`` month), stacked bars by model."""
    ax = _axes(ax)
    title = "Credits charged per " + {"D": "day", "W": "week", "M": "month"}.get(freq, freq)
    table = spend.spend_by_period(frame, freq=freq, by=by)
    if table.empty:
        return _empty(ax, title)
    fmt = "%Y-%m" if freq in ("M", "month") else "%Y-%m-%d"
    table.index = table.index.strftime(fmt)
    table.plot.bar(stacked=True, ax=ax, width=0.8, rot=45 if len(table) > 6 else 0)
    ax.set_title(title)
    ax.set_xlabel("")
    ax.set_ylabel("credits")
    _legend_beside(ax, title=by)
    return ax


def plot_spend_by_model(frame: pd.DataFrame, ax: Any = None) -> Any:
    """Total credits charged per model, horizontal bars, largest on top."""
    ax = _axes(ax)
    title = "Credits charged per model"
    table = spend.spend_by_model(frame)
    table = table[table["credits"] > 0]
    if table.empty:
        return _empty(ax, title)
    series = table["credits"].sort_values()
    series.index = series.index.astype(str)
    series.plot.barh(ax=ax)
    ax.set_title(title)
    ax.set_xlabel("credits")
    ax.set_ylabel("")
    return ax


def plot_latency(frame: pd.DataFrame, by: str = "type", bins: int = 30, ax: Any = None) -> Any:
    """Distribution of latency (submit to finish, seconds), one histogram per ``by`` value."""
    ax = _axes(ax)
    title = "Latency (created to finished)"
    finished = frame[frame["latency_s"].notna()]
    if finished.empty:
        return _empty(ax, title)
    wide = finished.pivot(columns=by, values="latency_s")
    wide.columns = wide.columns.astype(str)
    wide = wide.dropna(axis=1, how="all")
    wide.plot.hist(bins=bins, alpha=0.6, ax=ax)
    ax.set_title(title)
    ax.set_xlabel("seconds")
    _legend_beside(ax, title=by)
    return ax

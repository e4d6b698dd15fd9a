"""Spend analysis over a history frame (``generations_frame``): each function returns a DataFrame.

Money rules, so every figure matches the service's ledger to the credit:

- Spend is ``credits_charged`` of *completed* generations only (the spec: a completed job's
  reservation becomes the charge; a failed one is refunded; a pending one is only reserved).
- Prices are stated in hundredths of a credit (the list price and the discounted price are
  rounded to 2 decimals), so sums are done in integer hundredths: totals are exact, never
  ``50.400000000000006``.
- The refund of a failed generation is the reservation that was returned, which is the
  discounted estimate the client journaled before submitting (the service reserves exactly
  ``credits_after_discount``). The API does not report it, so generations the journal never saw
  are counted in ``refund_unknown`` instead of being guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mediagen.wire._fields import read_field

_FREQS = {"D": "day", "day": "day", "W": "week", "week": "week", "M": "month", "month": "month"}


def _cents(values: pd.Series) -> pd.Series:
    """Credits as nullable integer hundredths (exact sums)."""
    return pd.Series(np.rint(values.to_numpy(dtype="float64") * 100), index=values.index).astype(
        "Int64"
    )


def _credits(cents: Any) -> Any:
    """Integer hundredths back to float credits (NA -> 0.0 for sums)."""
    if isinstance(cents, (pd.Series, pd.DataFrame)):
        return cents.fillna(0).astype("float64") / 100
    return 0.0 if pd.isna(cents) else float(cents) / 100


def total_credits(values: pd.Series) -> float:
    """The exact sum of a credits column (NaN entries ignored)."""
    return _credits(_cents(values).sum())


def charged(frame: pd.DataFrame) -> pd.DataFrame:
    """The completed generations: the ones that were charged."""
    return frame[frame["status"] == "completed"]


def spend_by(frame: pd.DataFrame, by: str | Sequence[str]) -> pd.DataFrame:
    """Credits charged and generation counts per value of ``by`` (a column or columns).

    Columns: ``credits`` (charged, exact), ``generations``, ``completed``, ``failed``,
    ``pending``; one row per group seen in ``frame``, largest spend first.
    """
    keys = [by] if isinstance(by, str) else list(by)
    work = frame[keys].copy()
    work["_cents"] = _cents(frame["credits_charged"].where(frame["status"] == "completed"))
    for status in ("completed", "failed", "pending"):
        work[status] = (frame["status"] == status).astype("int64")
    grouped = work.groupby(keys, observed=True, dropna=False)
    out = pd.DataFrame(
        {
            "credits": _credits(grouped["_cents"].sum(min_count=1)),
            "generations": grouped.size(),
            "completed": grouped["completed"].sum(),
            "failed": grouped["failed"].sum(),
            "pending": grouped["pending"].sum(),
        }
    )
    return out.sort_values(["credits", "generations"], ascending=False, kind="stable")


def spend_by_model(frame: pd.DataFrame) -> pd.DataFrame:
    """``spend_by(frame, "model")``."""
    return spend_by(frame, "model")


def spend_by_type(frame: pd.DataFrame) -> pd.DataFrame:
    """``spend_by(frame, "type")``: image, video, audio."""
    return spend_by(frame, "type")


def spend_by_status(frame: pd.DataFrame) -> pd.DataFrame:
    """``spend_by(frame, "status")``: only ``completed`` carries spend."""
    return spend_by(frame, "status")


def local_timezone() -> Any:
    """This machine's time zone (daylight saving aware): what "today" means to the user."""
    from dateutil.tz import tzlocal  # a pandas dependency

    return tzlocal()


def _period_start(times: pd.Series, freq: str, tz: Any) -> pd.Series:
    """The local date (midnight, no time zone) that starts each time's period."""
    unit = _FREQS.get(freq)
    if unit is None:
        raise ValueError(f"freq must be one of {sorted(_FREQS)}, not {freq!r}")
    local = times.dt.tz_convert(tz if tz is not None else local_timezone()).dt.tz_localize(None)
    day = local.dt.floor("D")
    if unit == "day":
        return day
    if unit == "week":  # ISO weeks: from Monday
        return day - pd.to_timedelta(day.dt.day_of_week, unit="D")
    return day - pd.to_timedelta(day.dt.day - 1, unit="D")


def spend_by_period(
    frame: pd.DataFrame, freq: str = "D", by: str | None = None, tz: Any = None
) -> pd.DataFrame:
    """Credits charged per day (``"D"``), ISO week (``"W"``, from Monday) or month (``"M"``).

    A charge belongs to the period of its ``completed_at`` (when the reservation became the
    charge) on the calendar of ``tz`` (a name like ``"Europe/Berlin"``, ``"UTC"``, or a tzinfo;
    default: this machine's local time zone, so "today" is the user's today). The index holds
    the periods' first days as plain dates (``2026-11-16``). Without ``by``: columns ``credits``
    and ``completed``. With ``by`` (e.g. ``"model"``): one credits column per value, ready for
    a stacked plot. Periods without charges between the first and the last are included, 0.
    """
    done = charged(frame)
    period = _period_start(done["completed_at"], freq, tz).rename("period")
    cents = _cents(done["credits_charged"])
    if by is None:
        grouped = cents.groupby(period)
        out = pd.DataFrame({"credits": _credits(grouped.sum()), "completed": grouped.size()})
    else:
        table = cents.groupby([period, done[by]], observed=True).sum().unstack(by, fill_value=0)
        out = _credits(table)
        out.columns = out.columns.astype(object)
        out.columns.name = by
    if len(out):
        step = {"day": "D", "week": "7D", "month": "MS"}[_FREQS[freq]]
        full = pd.date_range(out.index.min(), out.index.max(), freq=step, unit="ns")
        out = out.reindex(full, fill_value=0)
        out.index.name = "period"
    return out


def failures_by_model(frame: pd.DataFrame, by: str = "model") -> pd.DataFrame:
    """Failure rate and refunded credits per model (or another column).

    ``failure_rate`` is failed / (completed + failed): pending jobs have no outcome yet.
    ``refunded_credits`` sums the journaled reservations of failed generations (see the module
    docstring); ``refund_unknown`` counts failed ones the journal cannot price.
    """
    failed = frame["status"] == "failed"
    estimate = frame["estimate_credits_after_discount"]
    work = pd.DataFrame(
        {
            by: frame[by],
            "completed": (frame["status"] == "completed").astype("int64"),
            "failed": failed.astype("int64"),
            "pending": (frame["status"] == "pending").astype("int64"),
            "_refund": _cents(estimate.where(failed)),
            "refund_unknown": (failed & estimate.isna()).astype("int64"),
        }
    )
    grouped = work.groupby(by, observed=True, dropna=False)
    out = grouped[["completed", "failed", "pending"]].sum()
    finished = out["completed"] + out["failed"]
    out.insert(0, "generations", grouped.size())
    out["failure_rate"] = (out["failed"] / finished.where(finished > 0)).astype("float64")
    out["refund_unknown"] = grouped["refund_unknown"].sum()
    refunded = _credits(grouped["_refund"].sum(min_count=1))
    # known refunds are summed; NaN only when every failure of the group is unpriced
    out["refunded_credits"] = refunded.where(
        (out["failed"] == 0) | (out["refund_unknown"] < out["failed"])
    )
    out = out[
        [
            *out.columns.drop(["refund_unknown", "refunded_credits"]),
            "refunded_credits",
            "refund_unknown",
        ]
    ]
    return out.sort_values(["failed", "generations"], ascending=False, kind="stable")


def failures_by_code(frame: pd.DataFrame) -> pd.DataFrame:
    """Failed generations per ``error_code`` and model (counts)."""
    failed = frame[frame["status"] == "failed"]
    return (
        failed.groupby(["error_code", "model"], observed=True)
        .size()
        .rename("failed")
        .reset_index()
        .sort_values("failed", ascending=False, kind="stable")
        .reset_index(drop=True)
    )


def cost_per_output(frame: pd.DataFrame) -> pd.DataFrame:
    """What a second of video or audio, or one image, cost, per model (completed jobs).

    Columns: ``type``, ``credits``, ``n_outputs``, ``output_seconds``,
    ``credits_per_second`` (video and audio: credits / seconds of media delivered) and
    ``credits_per_image`` (images: credits / images delivered).
    """
    done = charged(frame)
    work = pd.DataFrame(
        {
            "model": done["model"],
            "type": done["type"].astype(object),
            "_cents": _cents(done["credits_charged"]),
            "n_outputs": done["n_outputs"],
            "output_seconds": done["output_seconds"],
        }
    )
    grouped = work.groupby("model", observed=True)
    out = pd.DataFrame(
        {
            "type": grouped["type"].first(),
            "credits": _credits(grouped["_cents"].sum()),
            "n_outputs": grouped["n_outputs"].sum(),
            "output_seconds": grouped["output_seconds"].sum(min_count=1),
        }
    )
    timed = out["type"].isin(["video", "audio"]) & (out["output_seconds"] > 0)
    images = (out["type"] == "image") & (out["n_outputs"] > 0)
    out["credits_per_second"] = (out["credits"] / out["output_seconds"]).where(timed)
    out["credits_per_image"] = (out["credits"] / out["n_outputs"]).where(images)
    return out.sort_values("credits", ascending=False, kind="stable")


def _member_limit(credits: Any) -> Any:
    return read_field(credits, "member_limit")


def cycle_start(credits: Any = None, now: pd.Timestamp | None = None) -> pd.Timestamp:
    """Start of the member cap's cycle: a calendar month in UTC (docs/wire-contract.md).

    Taken from ``member_limit.resets_at`` when given (one month before it), else this month.
    """
    resets_at = read_field(_member_limit(credits), "resets_at")
    if resets_at is not None:
        return pd.Timestamp(resets_at).tz_convert("UTC") - pd.DateOffset(months=1)
    now = pd.Timestamp.now(tz="UTC") if now is None else now.tz_convert("UTC")
    return now.normalize() - pd.Timedelta(days=now.day - 1)


def cumulative_spend(frame: pd.DataFrame, credits: Any = None) -> pd.DataFrame:
    """Charges of the current cap cycle in order, with the running total against the cap.

    ``credits`` is ``client.credits.get()`` (object or dict). Rows: completed generations
    charged in the cycle, by ``completed_at``. Columns: ``completed_at``, ``id``, ``model``,
    ``credits``, ``cumulative``; with a member cap also ``limit`` and ``remaining``
    (limit - cumulative - credits still reserved by pending jobs, as the service counts them).
    ``frame.attrs`` of the result holds ``reserved_pending`` and, when capped, ``used_reported``.
    """
    start = cycle_start(credits)
    done = charged(frame)
    done = done[done["completed_at"] >= start].sort_values(["completed_at", "id"], kind="stable")
    cents = _cents(done["credits_charged"])
    out = pd.DataFrame(
        {
            "completed_at": done["completed_at"].to_numpy(),
            "id": done["id"].to_numpy(),
            "model": done["model"].to_numpy(),
            "credits": _credits(cents).to_numpy(),
            "cumulative": _credits(cents.cumsum()).to_numpy(),
        }
    )
    out["completed_at"] = out["completed_at"].astype(frame["completed_at"].dtype)
    out["model"] = out["model"].astype(frame["model"].dtype)
    pending = frame[(frame["status"] == "pending") & (frame["created_at"] >= start)]
    reserved = total_credits(pending["estimate_credits_after_discount"])
    out.attrs["cycle_start"] = start
    out.attrs["reserved_pending"] = reserved
    limit = read_field(_member_limit(credits), "limit")
    if limit is not None:
        out["limit"] = float(limit)
        out["remaining"] = (np.rint((float(limit) - out["cumulative"] - reserved) * 100)) / 100
        out.attrs["used_reported"] = read_field(_member_limit(credits), "used")
    return out


def estimate_vs_charge(frame: pd.DataFrame) -> pd.DataFrame:
    """For each completed, journaled generation: the estimate shown against the charge.

    Columns: ``id``, ``model``, ``estimate_credits`` (list price), ``estimate_credits_after_
    discount`` (what was quoted to be reserved), ``credits_charged``, ``difference``
    (charged - quoted, exact) and ``matches``.
    """
    done = charged(frame)
    done = done[done["estimate_credits_after_discount"].notna()]
    difference = _cents(done["credits_charged"]) - _cents(done["estimate_credits_after_discount"])
    out = done[
        ["id", "model", "estimate_credits", "estimate_credits_after_discount", "credits_charged"]
    ].copy()
    out["difference"] = _credits(difference)
    out["matches"] = (difference == 0).astype(bool)
    return out.reset_index(drop=True)


def headline(frame: pd.DataFrame, credits: Any = None) -> pd.Series:
    """The numbers a dashboard leads with, as one Series."""
    status = frame["status"]
    finished = int(((status == "completed") | (status == "failed")).sum())
    failed = int((status == "failed").sum())
    refunds = frame["estimate_credits_after_discount"].where(status == "failed")
    values: dict[str, Any] = {
        "generations": len(frame),
        "completed": int((status == "completed").sum()),
        "failed": failed,
        "pending": int((status == "pending").sum()),
        "spent": total_credits(frame["credits_charged"].where(status == "completed")),
        "failure_rate": failed / finished if finished else float("nan"),
        "refunded": total_credits(refunds),
        "reserved_pending": total_credits(
            frame["estimate_credits_after_discount"].where(status == "pending")
        ),
    }
    limit = _member_limit(credits)
    if credits is not None:
        values["balance"] = read_field(credits, "balance")
    if limit is not None:
        values["cap"] = read_field(limit, "limit")
        values["cap_used"] = read_field(limit, "used")
        values["cap_remaining"] = read_field(limit, "remaining")
    return pd.Series(values, dtype=object)

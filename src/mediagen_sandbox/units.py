"""How the sandbox writes times and money: fixed-width UTC text that sorts in time order, and
credits as integer cents so the ledger's sums are exact."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def iso(dt: datetime) -> str:
    """Fixed-width UTC timestamp (four-digit year even before 1000): sorts in time order."""
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """An ISO 8601 date-time in UTC (naive means UTC). ``ValueError`` for anything else,
    including an offset that moves it outside years 1 to 9999."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(f"{text!r} is outside the years 1 to 9999 in UTC") from None


def billing_cycle(dt: datetime) -> str:
    """Member caps reset with calendar months (UTC)."""
    return dt.strftime("%Y-%m")


def cycle_reset_at(cycle: str) -> str:
    year, month = (int(p) for p in cycle.split("-"))
    year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return f"{year:04d}-{month:02d}-01T00:00:00Z"


def to_cents(credits: float | int | str | Decimal) -> int:
    return int((Decimal(str(credits)) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def to_credits(cents: int) -> float:
    return cents / 100

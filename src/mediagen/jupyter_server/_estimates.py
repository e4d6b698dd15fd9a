"""What a running job has reserved, when the generation itself says enough to price it.

``GET /v1/generations/{id}`` reports a job's model, mode, type and prompt, not the rest of its
request (quality, tier, duration, counts, inputs). A quote is only worth showing when those
reported fields decide the price: the mode's catalog price is a flat price per generation, with
nothing chosen by the request (no tier table, multiplier, count, duration or priced input). For
any other job the estimate endpoint would price the catalog's defaults, not what was asked, so
the page keeps saying "reserved" without a figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mediagen.client import AsyncClient

#: the parts of a mode's ``price`` through which the request's own fields change the price
_CHOSEN_BY_THE_REQUEST = ("by", "multipliers", "count", "duration", "duration_from", "derive",
                          "per_input", "characters")  # fmt: skip


def reported_request(gen: Any) -> dict[str, Any]:
    """The request fields a generation reports about itself (what the estimate can price)."""
    return {"model": gen.model, "mode": gen.mode}


def priced_by_reported_fields(catalog: Any, request: Mapping[str, Any]) -> bool:
    """Whether ``request`` (model and mode only) fixes the price of its mode in ``catalog``."""
    mode = catalog.mode_for(request)
    if mode is None:
        return False
    price = mode.get("price") or {}
    return bool(price) and not any(price.get(part) for part in _CHOSEN_BY_THE_REQUEST)


async def estimate_of(client: AsyncClient, gen: Any) -> float | None:
    """Credits the estimate endpoint quotes for ``gen``'s reported fields, or None when those
    fields do not decide the price, or the service will not quote them (the model gone from
    the catalog, the plan no longer allowed it, the fields refused). A refusal is an answer
    kept like a quote; a 429, a server error or the network is raised, for the poller to wait
    out and ask again."""
    from mediagen.client import (
        BadRequestError,
        NotFoundError,
        PermissionDeniedError,
        ValidationError as Refused,
    )

    if not gen.model:
        return None
    try:
        info = await client.models.get(gen.model)
        request = reported_request(gen)
        if not priced_by_reported_fields(info.catalog, request):
            return None
        estimate = await client.models.estimate_request(request)
    except (BadRequestError, NotFoundError, PermissionDeniedError, Refused):
        return None
    credits = estimate.credits_after_discount
    if not estimate.allowed or credits is None:
        return None
    return float(credits)

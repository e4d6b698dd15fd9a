"""A call's ``timeout=``: one deadline for everything the call sends, retries included.

``within(flow, timeout)`` runs a flow unchanged except that every API request, download and
upload it makes ends by ``timeout`` seconds from now (each attempt's timeout, the backoff
between attempts and a ``Retry-After`` pause are all cut to the time left) and no pause of its
own outlasts it. The request that meets the deadline raises :class:`APITimeoutError`; a submit's
flow turns that into the lost-answer error that carries its idempotency key, as for any answer
that never came. Written once, as a flow, so ``Client`` and ``AsyncClient`` share it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from mediagen.client._effects import Call, Fetch, Flow, Now, Put, Sleep

_T = TypeVar("_T")


def earlier(deadline: float | None, other: float | None) -> float | None:
    """The sooner of two deadlines (None: none)."""
    if deadline is None:
        return other
    return deadline if other is None else min(deadline, other)


def within(flow: Flow[_T], timeout: float | None) -> Flow[_T]:
    """Flow: ``flow`` with a deadline ``timeout`` seconds from now (None: ``flow`` itself)."""
    if timeout is None:
        return (yield from flow)
    if timeout < 0:
        raise ValueError(f"timeout must be >= 0 seconds, not {timeout!r}")
    deadline = (yield Now()) + timeout
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = flow.throw(error) if error is not None else flow.send(value)
        except StopIteration as stop:
            return stop.value
        kind = type(effect)
        if kind is Call or kind is Fetch or kind is Put:
            effect = dataclasses.replace(effect, deadline=earlier(deadline, effect.deadline))
        elif kind is Sleep:
            left = deadline - (yield Now())
            effect = Sleep(max(0.0, min(effect.seconds, left)))
        try:
            value, error = (yield effect), None
        except BaseException as exc:  # the flow decides (a lost submit keeps its key)
            value, error = None, exc

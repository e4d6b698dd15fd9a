"""Helpers for widget scenarios on a running loop (as in a kernel)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any


def run(coro: Coroutine[Any, Any, Any], timeout: float = 60.0) -> Any:
    """Run a scenario on a fresh loop (the kernel's loop stands in), with an overall limit."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def until(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "") -> Any:
    """Wait (yielding to the loop) until ``predicate()`` is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        await asyncio.sleep(0.01)

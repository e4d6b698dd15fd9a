"""What a client operation asks its driver to do.

Operations (submit, wait, watch, download, upload, ...) are written once, as generators that
``yield`` these effects and receive the results; ``Client`` performs them with blocking I/O and
``AsyncClient`` with ``await``. So the logic of every operation exists exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from mediagen.client._requests import RequestSpec


@dataclass(frozen=True)
class Call:
    """Send an API request (auth, retries, rate limiting); the result is the decoded JSON.

    ``deadline`` (on the driver's clock, see :class:`Now`) bounds the whole request, retries
    included. ``persistent`` retries transient failures until then instead of ``max_retries``
    times (a wait riding out an outage).
    """

    spec: RequestSpec
    deadline: float | None = None
    persistent: bool = False


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Fetch:
    """Stream ``url`` (outside ``/v1``; no API key; redirects followed) into ``temp``.

    The result is a :class:`Fetched`; a final status that is not 2xx is an error.
    """

    url: str
    temp: Path
    deadline: float | None = None  # as for Call: the whole download, retries included


@dataclass(frozen=True)
class Fetched:
    """What a download delivered: its Content-Type, the bytes written, the Content-Length."""

    content_type: str | None
    size: int
    declared_size: int | None


@dataclass(frozen=True)
class Put:
    """Stream ``source`` to ``url`` with exactly ``headers``; result: the decoded JSON."""

    url: str
    headers: dict[str, str]
    source: Any  # _uploads.Source
    deadline: float | None = None  # as for Call: the whole upload, retries included


@dataclass(frozen=True)
class Invoke:
    """Call ``fn(*args)`` (a user callback); an awaitable result is awaited by AsyncClient."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Blocking:
    """Run a blocking function (file copies): inline in Client, in a thread in AsyncClient."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Emit:
    """Hand one item to the consumer of an iterating operation (list, watch)."""

    item: Any


@dataclass(frozen=True)
class Now:
    """The driver's monotonic clock (injectable for tests)."""


_T = TypeVar("_T")

#: an operation: yields effects, receives their results, returns a ``_T``
Flow = Generator[Any, Any, _T]

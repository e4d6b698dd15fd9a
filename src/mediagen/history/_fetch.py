"""Fetch raw pages of ``GET /v1/generations`` through the client's own transport.

The history needs the page JSON as the server sent it (see ``_frame``), with the client's
authentication, retries and rate limiting, so it asks the client for one raw page at a time and
follows ``next_cursor`` itself at the largest page size.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

#: Filters of ``GET /v1/generations`` (docs/wire-contract.md), besides the cursor ``after``.
LIST_FILTERS = ("status", "type", "model", "created_after")
#: Largest page size the list endpoint accepts (docs/wire-contract.md).
MAX_PAGE_SIZE = 100

PageGetter = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def page_getter(client: Any) -> PageGetter:
    """A function ``query -> page dict`` that sends ``GET /v1/generations`` through ``client``.

    ``client`` is a ``mediagen.Client``, or any callable taking the query and returning the
    decoded page (used by tests and benchmarks to measure the reduction alone).
    """
    generations = getattr(client, "generations", None)
    raw_page = getattr(generations, "_list_page_raw", None)
    if raw_page is not None:
        return lambda query: raw_page(**query)
    if callable(client):
        return client
    raise TypeError(
        "generations_frame needs a mediagen.Client (one with generations._list_page_raw) "
        f"or a callable returning raw list pages, not {type(client).__name__}"
    )


def iter_generation_pages(client: Any, params: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every page of the list endpoint for ``params``, following cursors to the end."""
    get_page = page_getter(client)
    query: dict[str, Any] = {**params, "limit": MAX_PAGE_SIZE}
    while True:
        page = get_page(query)
        yield page
        cursor = page.get("next_cursor")
        if not cursor or page.get("has_more") is False:
            return
        query = {**params, "limit": MAX_PAGE_SIZE, "after": cursor}


#: Cores a local service needs before fetching ahead pays: one for the server, one for the
#: reduction, one for the fetching thread's JSON decoding.
PREFETCH_LOCAL_CORES = 3


def prefetch_pays(client: Any, cores: int | None = None) -> bool:
    """Whether fetching the next page on a helper thread makes a history read faster here.

    Against a remote service the page's network wait frees the GIL, so overlapping it with the
    reduction of the page before wins. A service on this machine (the sandbox) needs a core of
    its own: measured on 2 cores (benchmarks/bench_history.py, 100k rows, loopback sandbox),
    fetching ahead made ``to_dataframe`` 1.07x the plain loop, against 0.87-0.92x without, as
    the decoding thread, the reduction and the server contend for two cores. So the choice
    follows the machine: fetch ahead from a local service only with ``PREFETCH_LOCAL_CORES``
    cores or more (``os.cpu_count()``).
    """
    config = getattr(client, "_config", None)
    host = urlsplit(getattr(config, "base_url", "") or "").hostname or ""
    if not host:
        return False  # a bare page source (tests, benchmarks): nothing to wait on
    local = host in ("localhost", "::1") or host.startswith("127.")
    if cores is None:
        cores = os.cpu_count() or 1
    return not local or cores >= PREFETCH_LOCAL_CORES


_DONE = object()


def prefetched(items: Iterable[Any], depth: int = 2) -> Iterator[Any]:
    """Iterate ``items`` on a helper thread, ``depth`` items ahead of the consumer.

    The producer spends its time waiting on the server (the GIL is free then), so reducing one
    page overlaps with fetching the next. Errors are re-raised in the consumer; stopping early
    (or an exception in the consumer) stops the producer after its current item.
    """
    handoff: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry: tuple[Any, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as exc:  # handed to the consumer, re-raised there
            put((_DONE, exc))
            return
        put((_DONE, None))

    worker = threading.Thread(target=produce, name="mediagen-history-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item, error = handoff.get()
            if item is _DONE:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()

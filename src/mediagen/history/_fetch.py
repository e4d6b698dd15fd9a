"""Fetch pages of ``GET /v1/generations`` through the client's own transport.

The history reads each page's body straight into Arrow columns (``_pages``), with the client's
authentication, retries and rate limiting, so it asks the client for one page at a time as
bytes and follows ``next_cursor`` itself at the largest page size.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from mediagen.history._pages import Page, RawPage, page_from_dict, parse_page, parse_pages

if TYPE_CHECKING:
    from mediagen.client import Client

#: Filters of ``GET /v1/generations`` (docs/wire-contract.md), besides the cursor ``after``.
LIST_FILTERS = ("status", "type", "model", "created_after")
#: Largest page size the list endpoint accepts (docs/wire-contract.md).
MAX_PAGE_SIZE = 100

PageGetter = Callable[[Mapping[str, Any]], Page]
#: Where the pages come from: a blocking ``Client`` (an ``AsyncClient``'s history reads through
#: its blocking twin before it gets here), or any callable taking the query and returning the
#: page as decoded JSON or as the body's bytes (tests and benchmarks measure the reading alone).
PageSource: TypeAlias = "Client | Callable[[Mapping[str, Any]], Mapping[str, Any] | bytes]"


def page_getter(client: PageSource) -> PageGetter:
    """A function ``query -> Page`` that sends ``GET /v1/generations`` through ``client`` (a
    ``mediagen.Client``, or a callable: see :data:`PageSource`)."""
    return _getter(client, parse_page)


def _getter(
    client: PageSource, decode: Callable[[bytes], Any]
) -> Callable[[Mapping[str, Any]], Any]:
    from mediagen.client import AsyncClient

    if isinstance(client, AsyncClient):  # its pages are awaited; the fetch threads block
        raise TypeError("generations_frame reads pages with a mediagen.Client, not an AsyncClient")
    generations = getattr(client, "generations", None)
    raw_page = getattr(generations, "_list_page_raw", None)
    if raw_page is not None:
        return lambda query: raw_page(**query, decode=decode)
    if callable(client):
        return lambda query: decode(as_bytes(client(query)))
    raise TypeError(
        "generations_frame needs a mediagen.Client (one with generations._list_page_raw) "
        f"or a callable returning raw list pages, not {type(client).__name__}"
    )


def as_bytes(page: Mapping[str, Any] | bytes) -> bytes:
    """A page given as decoded JSON or as the body's bytes, as bytes."""
    if isinstance(page, bytes | bytearray):
        return bytes(page)
    return json.dumps(page, default=str).encode()


def as_page(page: Page | Mapping[str, Any] | bytes) -> Page:
    """A page given as a ``Page``, as decoded JSON, or as the body's bytes."""
    if isinstance(page, Page):
        return page
    if isinstance(page, bytes | bytearray):
        return parse_page(bytes(page))
    return page_from_dict(page)


#: Pages read together by one call of the JSON reader (``parse_pages``)...
READ_BATCH = 8
#: ...unless the first of them has waited this long (a slow service: show progress instead).
READ_WAIT_S = 0.05
#: Batches received but not read yet, at most (the reader is far quicker than the service;
#: this only bounds memory if it is not).
READ_AHEAD_BATCHES = 4


@dataclass
class _Batch:
    cursor: str | None  # the confirmed cursor its first page was asked for with
    raws: list[RawPage]
    since: float
    reading: Future[list[Page]] | None = None


def iter_generation_pages(
    client: PageSource, params: Mapping[str, Any], after: str | None = None
) -> Iterator[Page]:
    """Every page of the list endpoint for ``params`` (from cursor ``after``) to the end.

    The next page is asked for as soon as a page's bytes arrive, with the cursor found in
    them by a quick scan (``guess_next_cursor``), while a helper thread reads the pages
    received into columns (``parse_pages``, a few at a time, mostly without the GIL). A page
    is handed on only once the page before it was read and its cursor was the one guessed;
    if a guess was wrong (a server that names a ``next_cursor`` inside its items, say) or a
    body does not read, the rest is asked for again the careful way, one page read at a time:
    never a page from a wrong cursor.
    """
    base: dict[str, Any] = {**params, "limit": MAX_PAGE_SIZE}
    quick = _getter(client, RawPage.of)
    careful = page_getter(client)
    batches: deque[_Batch] = deque()
    with ThreadPoolExecutor(1, thread_name_prefix="mediagen-history-read") as reader:

        def send(batch: _Batch) -> None:
            batch.reading = reader.submit(parse_pages, [raw.content for raw in batch.raws])

        cursor: str | None = after
        current = _Batch(cursor, [], time.monotonic())
        while True:
            try:
                raw = quick(_query(base, cursor))
            except Exception:
                # Asked for with a cursor not confirmed yet: if it was a wrong guess, the
                # error is the guess's (a refused cursor), and the careful way goes on.
                if current.raws:
                    send(current)
                    batches.append(current)
                while batches:
                    if not (yield from _confirmed(batches.popleft(), careful, base)):
                        return
                raise
            current.raws.append(raw)
            cursor = raw.next_cursor
            waited = time.monotonic() - current.since > READ_WAIT_S
            if cursor is None or waited or len(current.raws) >= READ_BATCH:
                send(current)
                batches.append(current)
                current = _Batch(cursor, [], time.monotonic())
            while batches and (
                cursor is None or _done(batches[0]) or len(batches) > READ_AHEAD_BATCHES
            ):
                if not (yield from _confirmed(batches.popleft(), careful, base)):
                    return  # the rest came the careful way
            if cursor is None:
                return


def _done(batch: _Batch) -> bool:
    return batch.reading is not None and batch.reading.done()


def _confirmed(
    batch: _Batch, careful: PageGetter, base: dict[str, Any]
) -> Generator[Page, None, bool]:
    """Yield the batch's pages; False when a guess was wrong (the rest then came carefully)."""
    assert batch.reading is not None
    try:
        pages = batch.reading.result()
    except ValueError:  # a body that does not read: ask again, through the retries
        yield from _careful_pages(careful, base, batch.cursor, first=True)
        return False
    for raw, page in zip(batch.raws, pages, strict=True):
        yield page
        if page.next_cursor != raw.next_cursor:  # the scan was wrong: go carefully
            yield from _careful_pages(careful, base, page.next_cursor)
            return False
    return True


def _careful_pages(
    get_page: PageGetter, base: dict[str, Any], cursor: str | None, first: bool = False
) -> Iterator[Page]:
    """Pages from ``cursor`` on, each read before the next is asked for (``first``: the page
    at ``cursor`` even when ``cursor`` is None, the start of the list)."""
    while first or cursor is not None:
        page = get_page(_query(base, cursor))
        yield page
        cursor, first = page.next_cursor, False


def _query(base: dict[str, Any], cursor: str | None) -> dict[str, Any]:
    return {**base, "after": cursor} if cursor else base

"""List pages parsed straight into Arrow columns: the one reduction every history read uses.

Why: a history is read 100 generations a page, up to millions of rows. Decoding each page into
Python dicts and picking the fields out in Python held the GIL for most of the client's time,
so nothing else in the process (storing the chunk before, a kernel's comms) could run while
pages arrived. pyarrow's JSON reader parses the page's bytes in C++, without the GIL, into typed
columns; the history's columns are then computed on those arrays, and the Parquet store and the
DataFrame are built from them with no Python object per value.

Dicts (a generation from ``GET /v1/generations/{id}``, pages in tests) take the same road as
JSON text, so there is one reading of the service's fields, not two that could drift apart.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from mediagen.wire import _names as _wire

#: Times are read at pandas' precision (the store writes microseconds, the API's).
TIME = pa.timestamp("ns", tz="UTC")

_OUTPUT = pa.struct(
    [
        ("duration_seconds", pa.float64()),
        # Integers by the spec; read as numbers so 64.0 is accepted (and 64.5 refused later).
        ("width", pa.float64()),
        ("height", pa.float64()),
    ]
)
#: The fields of a generation the history keeps (others, present or future, are ignored).
ITEM = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("status", pa.string()),
        ("model", pa.string()),
        ("mode", pa.string()),
        ("prompt", pa.string()),
        ("created_at", TIME),
        ("completed_at", TIME),
        ("credits_charged", pa.float64()),
        ("error", pa.struct([("code", pa.string()), ("message", pa.string())])),
        ("idempotency_key", pa.string()),
        ("outputs", pa.list_(_OUTPUT)),
    ]
)
_PAGE = pa.schema(
    [
        (_wire.LIST_ITEMS, pa.list_(ITEM)),
        (_wire.LIST_NEXT_CURSOR, pa.string()),
        (_wire.LIST_HAS_MORE, pa.bool_()),
    ]
)
_PARSE = pa_json.ParseOptions(
    explicit_schema=_PAGE, unexpected_field_behavior="ignore", newlines_in_values=True
)
# One page is small: the reader's thread pool costs more than it saves.
_READ = pa_json.ReadOptions(use_threads=False, block_size=1 << 24)

#: The columns kept from the service, in frame order (``_schema.API_COLUMNS``), and their
#: Arrow types on disk: some as the service sends them, the rest computed by ``stored_table``.
STORED_SCHEMA = pa.schema(
    [ITEM.field(name) for name in ("id", "type", "status", "model", "mode", "prompt")]
    + [ITEM.field("created_at"), ITEM.field("completed_at"), ("latency_s", pa.float64())]
    + [ITEM.field("credits_charged"), ("error_code", pa.string()), ("error_message", pa.string())]
    + [("n_outputs", pa.int64()), ("output_seconds", pa.float64())]
    + [("width", pa.int64()), ("height", pa.int64()), ITEM.field("idempotency_key")]
)


class PageError(ValueError):
    """A list page that is JSON but not a page of generations the history can read."""


@dataclass(frozen=True)
class Page:
    """One list page: its generations (an Arrow array of ``ITEM``) and where the next starts."""

    items: pa.Array
    next_cursor: str | None

    def __len__(self) -> int:
        return len(self.items)

    def ids(self) -> list[str]:
        return pc.struct_field(self.items, "id").to_pylist()

    def first_created_at(self) -> str | None:
        """The first generation's creation time (ISO 8601), or None on an empty page."""
        if not len(self.items):
            return None
        first = pc.struct_field(self.items, "created_at")[0].as_py()
        return None if first is None else first.isoformat()


@dataclass(frozen=True)
class RawPage:
    """A page's body as it arrived, with the cursor a quick scan found in it (unconfirmed)."""

    content: bytes
    next_cursor: str | None

    @classmethod
    def of(cls, content: bytes) -> RawPage:
        """Raises ``ValueError`` for a body that cannot be a JSON object (a proxy's page, an
        answer cut short: the client takes those for answers lost on the way)."""
        body = content.strip()
        if not (body.startswith(b"{") and body.endswith(b"}")):
            raise PageError("a page of GET /v1/generations is a JSON object, and this is not")
        return cls(content, guess_next_cursor(body))


def _key(name: str) -> bytes:
    return b'"' + name.encode() + b'"'


_CURSOR = re.compile(re.escape(_key(_wire.LIST_NEXT_CURSOR)) + rb'\s*:\s*("(?:[^"\\]|\\.)*"|null)')
_NO_MORE = re.compile(re.escape(_key(_wire.LIST_HAS_MORE)) + rb"\s*:\s*false")


def guess_next_cursor(content: bytes) -> str | None:
    """The page's ``next_cursor`` found by scanning its bytes (its last mention), not parsing.

    A key inside a JSON string has its quotes escaped, so text cannot fake it; a key of that
    name nested in an item could, which is why ``parse_page`` confirms every guess.
    """
    found = _last(_CURSOR, content, _key(_wire.LIST_NEXT_CURSOR))
    if found is None or found.group(1) == b"null":
        return None
    if _last(_NO_MORE, content, _key(_wire.LIST_HAS_MORE)) is not None:
        return None
    return json.loads(found.group(1)) or None


def _last(pattern: re.Pattern[bytes], content: bytes, key: bytes) -> re.Match[bytes] | None:
    at = content.rfind(key)
    return pattern.match(content, at) if at >= 0 else None


def parse_page(content: bytes) -> Page:
    """The page in ``content`` (the list endpoint's JSON body), read without the GIL.

    Raises ``PageError`` for JSON that is not a page of generations (a field of the wrong
    type), and ``ValueError`` for a body that is not JSON at all.
    """
    return parse_pages([content])[0]


def parse_pages(contents: list[bytes]) -> list[Page]:
    """The pages in ``contents``, read together (one reader call costs about as much as
    parsing half a page, so a few pages at once are read at two thirds of the cost).

    Raises like ``parse_page`` when any of them does not read.
    """
    try:
        table = pa_json.read_json(
            io.BytesIO(b"\n".join(contents)), read_options=_READ, parse_options=_PARSE
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        for content in contents:
            json.loads(content)  # not JSON at all: json's own ValueError says so
        raise PageError(f"a page of GET /v1/generations is not history: {exc}") from None
    if table.num_rows != len(contents):
        raise PageError("a page of GET /v1/generations is one JSON object, and one was not")
    lists = table.column(_wire.LIST_ITEMS).combine_chunks()
    cursors = table.column(_wire.LIST_NEXT_CURSOR).to_pylist()
    more = table.column(_wire.LIST_HAS_MORE).to_pylist()
    return [
        Page(
            items=lists[i].values if lists[i].is_valid else _NO_ITEMS,
            next_cursor=None if more[i] is False else cursors[i] or None,
        )
        for i in range(len(contents))
    ]


_NO_ITEMS = pa.array([], type=ITEM)


def page_from_dict(page: Mapping[str, Any]) -> Page:
    """A page given as decoded JSON (the list endpoint's object), read like the service's bytes."""
    return parse_page(json.dumps(page, default=str).encode())


def items_from_dicts(generations: Iterable[Mapping[str, Any]]) -> pa.Array:
    """Generation objects (decoded JSON) as an Arrow array of ``ITEM``."""
    return page_from_dict({_wire.LIST_ITEMS: list(generations)}).items


def stored_table(items: pa.Array | pa.ChunkedArray) -> pa.Table:
    """The history's service columns (``STORED_SCHEMA``) of an array of generations."""
    if isinstance(items, pa.ChunkedArray):
        items = items.combine_chunks() if items.num_chunks else pa.array([], type=ITEM)
    field = {name: pc.struct_field(items, name) for name in ITEM.names}
    status = field["status"]
    created, completed = field["created_at"], field["completed_at"]
    latency = pc.divide(pc.cast(pc.subtract(completed, created), pa.int64()), 1e9)
    # The spec: null while pending, final once completed; a failed job charges nothing, so it
    # is null too (not 0) and never counted as spend.
    completed_mask = pc.fill_null(pc.equal(status, "completed"), False)
    credits = pc.if_else(completed_mask, field["credits_charged"], None)
    error = field["error"]
    outputs = field["outputs"]
    n_outputs, width, height, seconds = _outputs(outputs)
    columns = {
        "id": field["id"],
        "type": field["type"],
        "status": status,
        "model": field["model"],
        "mode": field["mode"],
        "prompt": field["prompt"],
        "created_at": created,
        "completed_at": completed,
        "latency_s": latency,
        "credits_charged": credits,
        "error_code": pc.struct_field(error, "code"),
        "error_message": pc.struct_field(error, "message"),
        "n_outputs": n_outputs,
        "output_seconds": seconds,
        "width": width,
        "height": height,
        "idempotency_key": field["idempotency_key"],
    }
    return pa.Table.from_arrays(
        [pc.cast(columns[f.name], f.type) for f in STORED_SCHEMA], schema=STORED_SCHEMA
    )


def _outputs(outputs: pa.ListArray) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array]:
    """Per generation: how many outputs, the first one's width and height, and the total
    media seconds (null when no output reports a duration: images)."""
    rows = len(outputs)
    counts = pc.fill_null(pc.list_value_length(outputs), 0).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(outputs)  # the outputs of valid lists only, in order
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    has = counts > 0
    first = pa.array(np.where(has, starts, 0))
    width = height = pa.nulls(rows, pa.float64())
    if len(flat):
        mask = pa.array(~has)
        width = pc.if_else(mask, None, pc.take(pc.struct_field(flat, "width"), first))
        height = pc.if_else(mask, None, pc.take(pc.struct_field(flat, "height"), first))
    parents = np.repeat(np.arange(rows), counts)
    durations = pc.struct_field(flat, "duration_seconds").to_numpy(zero_copy_only=False)
    known = ~np.isnan(durations)
    total = np.bincount(parents[known], weights=durations[known], minlength=rows)
    reported = np.bincount(parents[known], minlength=rows) > 0
    seconds = pa.array(total, mask=~reported)
    return pa.array(counts, pa.int64()), width, height, seconds

"""Large request bodies are parsed and validated in a separate process.

Parsing and validating a body of up to 1 MiB (a megabyte-long prompt, tens of thousands of
unknown keys) takes milliseconds, all of it inside single C calls that hold the GIL. On a
worker thread that is still milliseconds in which the event loop, and every other
organization's requests with it, cannot run. So a body larger than ``INLINE_BYTES`` is handed
to a parser process (started on first use, niced, dying with the server, see
:mod:`mediagen_sandbox.children`); the server's threads only wait for its small answer. Valid
requests are a few kilobytes and are parsed inline, which is cheaper than the trip.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from pydantic import BaseModel

from .api.parsing import parse_body
from .children import process_pool, stop_pool
from .errors import APIError

log = logging.getLogger("mediagen_sandbox")

# A valid body is a few KB (prompts are at most 4,000 characters); parsing 32 KB of the worst
# shape (unknown keys) holds the GIL about 0.3 ms.
INLINE_BYTES = 32 * 1024
PARSER_NICENESS = 10  # well below the server and lone renders: honest bodies are small


def body_params(model: type[BaseModel], raw: bytes) -> dict[str, Any]:
    """The validated body without unset or null fields (raises the 422)."""
    return parse_body(model, raw).model_dump(exclude_unset=True, exclude_none=True)


def _params_or_error(model: type[BaseModel], raw: bytes) -> tuple[str, Any]:
    """Runs in the parser process: the params, or the error's fields (an ``APIError`` does not
    survive pickling)."""
    try:
        return "params", body_params(model, raw)
    except APIError as exc:
        return "error", (exc.status, exc.code, exc.message, exc.details, exc.headers)


class BodyParser:
    """``parser.params(model, raw)``, from a worker thread: :func:`body_params`, in the parser
    process when the body is large."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def params(self, model: type[BaseModel], raw: bytes) -> dict[str, Any]:
        if len(raw) <= INLINE_BYTES:
            return body_params(model, raw)
        try:
            kind, value = self._get_pool().submit(_params_or_error, model, raw).result()
        except BrokenProcessPool:
            log.warning("the body parser process died; starting another")
            with self._lock:
                self._pool = None
            kind, value = self._get_pool().submit(_params_or_error, model, raw).result()
        if kind == "error":
            status, code, message, details, headers = value
            raise APIError(status, code, message, details=details, headers=headers)
        return value

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = process_pool(1, PARSER_NICENESS)
            return self._pool

    def stop(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            stop_pool(pool)

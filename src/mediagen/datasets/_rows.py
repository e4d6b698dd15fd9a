"""The executor of a plan's rows: submit each with its key, watch them in bulk, save outputs.

One function serves every engine: ``Plan.run`` calls it on chunks of the table in the user's
process; the Dask and Spark adapters call it on each partition in a worker, with a client built
from the worker's environment. It never raises for a row: each row's outcome is a line of the
result frame (``RESULT_COLUMNS``), so one refused or failed row leaves the others running.

Why a re-run is free: each row goes out with its own idempotency key (``_keys.row_key``), and
the service answers a key it has seen (with the same body) with the generation it already made,
charging nothing again. A row finished before a crash is read back from that answer; one still
running is watched again. Rows are submitted a chunk at a time on a thread pool while the
chunk before is watched through the bulk listing (``client.generations.watch``: one request per
page of a hundred, not one poll per job), so memory holds at most two chunks of generations.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, as_completed
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mediagen.client._errors import APITimeoutError
from mediagen.datasets._schema import RESULT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from mediagen.client import Client, Generation
    from mediagen.client._batch import Executor

#: rows submitted ahead of the watch; two chunks' generations are held at most
CHUNK = 400

OnRow = Callable[[Hashable, dict[str, Any]], Any]


def empty_record() -> dict[str, Any]:
    return dict.fromkeys(RESULT_COLUMNS)


def error_record(exc: BaseException) -> dict[str, Any]:
    """A row that was not submitted (refused, or its request never arrived): no charge."""
    record = empty_record()
    record.update(status="error", credits=0.0, error_code=getattr(exc, "code", None) or "")
    record["error"] = f"{type(exc).__name__}: {exc}"
    return record


def _latency(gen: Generation) -> float | None:
    start, end = gen.created_at, gen.completed_at
    if isinstance(start, dt.datetime) and isinstance(end, dt.datetime):
        return max(0.0, (end - start).total_seconds())
    return None


def is_url(target: str) -> bool:
    return "://" in target and not target.startswith("file://")


def check_output_dir(output_dir: str | None) -> None:
    """Make ``output_dir`` (a local directory, or an fsspec URL) ready to take the outputs,
    or raise ValueError naming it: before the first submit, since a row paid for and then not
    saved is money spent for nothing. A local directory is made and written to once."""
    if output_dir is None:
        return
    try:
        if is_url(output_dir):
            import fsspec  # optional: only a remote output_dir needs it

            fs, root = fsspec.core.url_to_fs(output_dir)
            fs.makedirs(root, exist_ok=True)
            return
        directory = Path(output_dir.removeprefix("file://")).expanduser()
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except (OSError, ValueError) as exc:
        raise ValueError(
            f"output_dir {output_dir!r} cannot take the outputs ({exc}); nothing was sent"
        ) from None


def save_outputs(
    client: Client,
    gen: Generation,
    output_dir: str | None,
    credentials: list[str] | None = None,
) -> str | None:
    """The outputs of a completed generation where the caller asked (an fsspec URL, a local
    directory, or the client's cache when None); the first one's path or URL, the others
    joined after it with a newline.

    With an ``output_dir`` each output takes the disk once: it is downloaded straight into a
    local directory, or through a temporary file for a URL, and no copy is added to the cache
    (one the cache holds already is copied from it). A re-run downloads it again, which costs
    no credits. It is named after its asset id, as in the cache: the name the service suggests
    holds 8 characters of the generation id, which two rows of a large table can share.
    Each output's sidecar goes with it; ``credentials`` (a list) gets each one's state.
    """
    from mediagen.client._transport import save_output
    from mediagen.provenance._sidecar import sealed_as

    places = []
    for output in gen.outputs:
        if output_dir is None:
            local = output.download()
            place, state = str(local), sealed_as(local)
        elif is_url(output_dir):
            place, state = _save_remote(client, output, output_dir)
        else:
            directory = Path(output_dir.removeprefix("file://")).expanduser()
            name = client._cache.path_for(output).name
            local = client._run(save_output(client, output, directory, name=name))
            place, state = str(local), sealed_as(local)
        places.append(place)
        if credentials is not None:
            credentials.append(state)
    return "\n".join(places) if places else None


def _save_remote(client: Client, output: Any, output_dir: str) -> tuple[str, str]:
    """One output and its sidecar written to ``output_dir`` (an fsspec URL) under its cache
    name: streamed from the cache's copy, or from a temporary download beside the cache,
    removed after. The URL, and the credentials' state (read before the staging goes)."""
    import tempfile

    from mediagen.client._transport import save_output

    name = client._cache.path_for(output).name
    cached = output.local_path
    if cached is not None:
        return _upload_sealed(cached, output_dir, name)
    root = Path(client.cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".table-", dir=root) as staging:
        return _upload_sealed(client._run(save_output(client, output, staging)), output_dir, name)


def _upload_sealed(source: Path, output_dir: str, name: str) -> tuple[str, str]:
    from mediagen.provenance._sidecar import sealed_as, sidecar_of

    if sidecar_of(source).exists():
        _upload(sidecar_of(source), output_dir, sidecar_of(Path(name)).name)
    return _upload(source, output_dir, name), sealed_as(source)


def _upload(source: Path, output_dir: str, name: str) -> str:
    import shutil

    import fsspec  # optional: only a remote output_dir needs it

    target = output_dir.rstrip("/") + "/" + name
    with source.open("rb") as data, fsspec.open(target, "wb") as handle:
        shutil.copyfileobj(data, handle)
    return target


def finished_record(client: Client, gen: Generation, output_dir: str | None) -> dict[str, Any]:
    """A row whose generation is terminal: its charge, latency, saved output or error."""
    record = empty_record()
    record.update(generation_id=gen.id, status=gen.status, latency_s=_latency(gen))
    record["credits"] = float(gen.credits_charged or 0.0)
    if gen.status == "completed":
        credentials: list[str] = []
        try:
            record["output"] = save_outputs(client, gen, output_dir, credentials)
            record["credentials"] = "\n".join(credentials) or None
        except Exception as exc:  # the job is paid for; the row says why its file is missing
            record.update(error_code="download_failed", error=f"{type(exc).__name__}: {exc}")
    elif gen.error is not None:
        record.update(error_code=gen.error.code, error=gen.error.message)
    return record


class _Kinds:
    """Each model's kind, read from the catalog once for all the threads of a run. Not once
    per thread: they start together, and a Dask worker's 8 threads each fetching the same
    entry, at a cluster's slow start of the key's pace, held the first submits for seconds."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._found: dict[Any, str] = {}
        self._lock = threading.Lock()

    def __call__(self, model: Any) -> str:
        with self._lock:  # the others wait for the one fetch (a failed one: each tries again)
            if model not in self._found:
                self._found[model] = str(self._client.models.get(str(model)).type)
            return self._found[model]


#: the least a row held past its deadline by the key's rate limit waits before its next try
HELD_PAUSE = 0.05


def submit_row(
    client: Client,
    request: dict[str, Any],
    key: str,
    kind_of: _Kinds,
    stopped: threading.Event,
) -> Any:
    """Submit one row with its key: its generation (a new one, or the one that key made
    already) or the exception that kept it from being sent. A row the key's rate limit held (or
    refused) past the call's deadline was made by nobody: it waits its turn again rather than
    fail, so a slow limit shared by many workers slows a table down and fails none of its
    rows (unless the run is ``stopped`` meanwhile: then it is left unsent)."""
    while True:
        try:
            kind = kind_of(request.get("model"))
            return client.resource(kind).create(**request, idempotency_key=key, estimate=False)
        except APITimeoutError as exc:
            # the slots the key's queue holds now go first: asked for at once, each retry
            # would take a slot it cannot reach before its deadline, and none would be sent
            pause = max(client._gate.waiting_for, HELD_PAUSE)
            if not exc.held_by_limit or stopped.wait(pause):
                return exc
        except Exception as exc:  # one outcome per row: the frame says what went wrong
            return exc


def _chunks(rows: pd.DataFrame, size: int) -> Iterator[pd.DataFrame]:
    for start in range(0, len(rows), size):
        yield rows.iloc[start : start + size]


class _Chunk:
    """One chunk in flight: its positions in the frame and its submits (futures)."""

    def __init__(self, offset: int, futures: list[Future[Any]]) -> None:
        self.offset = offset
        self.futures = futures


def _watch_chunk(
    client: Client,
    chunk: _Chunk,
    labels: list[Hashable],
    records: list[dict[str, Any] | None],
    output_dir: str | None,
    pool: Executor,
    on_row: OnRow | None,
) -> None:
    """Wait for a chunk's submits, watch its generations in bulk, save outputs (in the pool)
    and fill its records."""
    position: dict[str, int] = {}
    gens = []
    for i, future in enumerate(chunk.futures, start=chunk.offset):
        outcome = future.result()
        if isinstance(outcome, BaseException):
            records[i] = error_record(outcome)
            _tell(on_row, labels[i], records[i])
        else:
            position[outcome.id] = i
            gens.append(outcome)
    # a row is told once its output is saved, by the next round of the watch (its updates
    # come here), not when its whole chunk is: a progress bar moves with the rows
    saving: dict[Future[dict[str, Any]], int] = {}

    def tell(future: Future[dict[str, Any]]) -> None:
        i = saving.pop(future)
        records[i] = future.result()
        _tell(on_row, labels[i], records[i])

    def tell_saved(*_: Any) -> None:
        for future in [f for f in saving if f.done()]:
            tell(future)

    for gen in client.generations.watch(gens, download=False, on_update=tell_saved):
        saving[pool.submit(finished_record, client, gen, output_dir)] = position[gen.id]
        tell_saved()
    for future in as_completed(list(saving)):
        tell(future)


def _tell(on_row: OnRow | None, label: Hashable, record: dict[str, Any] | None) -> None:
    if on_row is not None and record is not None:
        on_row(label, record)


def run_rows(
    client: Client,
    rows: pd.DataFrame,
    *,
    output_dir: str | os.PathLike[str] | None,
    concurrency: int = 8,
    progress: OnRow | None = None,
) -> pd.DataFrame:
    """Run ``rows`` (index: row labels; columns ``request``, a dict, and ``key``) and return
    one result line per row, same index, exactly ``RESULT_COLUMNS``.

    ``progress(label, record)`` is called as each row finishes (record: its result columns).
    """
    import pandas as pd

    target = None if output_dir is None else os.fspath(output_dir)
    labels = list(rows.index)
    records: list[dict[str, Any] | None] = [None] * len(rows)
    kinds = _Kinds(client)
    workers = max(1, int(concurrency))
    # after Ctrl-C or an error, rows not yet sent stay unsent (the next call sends them)
    with client.executor(workers) as pool:
        waiting: _Chunk | None = None
        offset = 0
        for part in _chunks(rows, max(CHUNK, workers)):
            futures = [
                pool.submit(submit_row, client, dict(request), str(key), kinds, pool.stopped)
                for request, key in zip(part["request"], part["key"], strict=True)
            ]
            if waiting is not None:
                _watch_chunk(client, waiting, labels, records, target, pool, progress)
            waiting = _Chunk(offset, futures)
            offset += len(part)
        if waiting is not None:
            _watch_chunk(client, waiting, labels, records, target, pool, progress)
    frame = pd.DataFrame.from_records(
        [r if r is not None else empty_record() for r in records],
        columns=list(RESULT_COLUMNS),
    )
    frame.index = rows.index
    return frame.astype(RESULT_COLUMNS)

"""A local history store: settled generations kept as Parquet, synced incrementally.

Why: completed and failed generations never change (the spec), so fetching them again for every
question is waste. The store keeps them on disk per service and key owner; a sync asks the list
endpoint only for what was created since the last one (plus what was still pending then).

Layout under the store's folder::

    settled/part-<n>.parquet   settled generations, one file per sync chunk, never rewritten
    open.parquet               generations still pending at the end of the last sync
    open-next.parquet          pending ones seen by a sync that has not finished yet
    state.json                 where the next sync starts (and where an interrupted one resumes)

Crash safety: every file is written under a temporary name and renamed into place (atomic on
POSIX), and ``state.json`` is renamed last. A sync killed at any point leaves either the old
state (the next sync fetches those pages again and skips, by id, every row already stored) or
the new one; a row is never torn, and never stored twice. A long first sync saves its progress
every ``chunk_pages`` pages with the page cursor, so an interrupted sync resumes where it
stopped (the spec keeps cursors valid while new generations arrive).

The store holds the service's fields only, never the API key (the folder is named after a hash
prefix of it); the request journal is joined when the frame is read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mediagen.history import _schema
from mediagen.history._fetch import iter_generation_pages
from mediagen.history._frame import (
    _USE_CLIENT_JOURNAL,
    _filter_params,
    concat_history,
    first_of_each_id,
    frame_from_generations,
    frame_from_table,
    join_journal,
)
from mediagen.history._pages import ITEM, STORED_SCHEMA, Page, stored_table
from mediagen.local._files import write_atomic

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Client

#: Bumped when the files' layout changes; a store of another version is rebuilt.
STORE_VERSION = 1
#: Columns kept on disk: the service's. Journal columns are joined on read (they can change).
STORED_COLUMNS = tuple(STORED_SCHEMA.names)


@dataclass(frozen=True)
class SyncResult:
    """What one sync did: rows fetched, rows newly stored, and how many are still pending."""

    fetched: int
    stored: int
    pending: int
    resumed: bool


def default_root(client: Client | AsyncClient) -> Path:
    """``<cache_dir>/history/<host>-<key id>``: one store per service and key owner."""
    config = client._config
    digest = hashlib.sha256(str(config.base_url).encode()).hexdigest()[:10]
    return Path(config.cache_dir) / "history" / f"{digest}-{config.key_fingerprint}"


class HistoryStore:
    """Settled generations on disk, synced from the list endpoint (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser()

    @classmethod
    def for_client(cls, client: Client | AsyncClient) -> HistoryStore:
        """The store of ``client``'s service and key, under its cache folder."""
        return cls(default_root(client))

    def __repr__(self) -> str:
        return f"HistoryStore({str(self.root)!r})"

    # --- files ---------------------------------------------------------------------------

    @property
    def _settled_dir(self) -> Path:
        return self.root / "settled"

    def segments(self) -> list[Path]:
        """The settled Parquet files, oldest first."""
        if not self._settled_dir.is_dir():
            return []
        return sorted(self._settled_dir.glob("part-*.parquet"), key=_segment_number)

    def _state(self) -> dict[str, Any]:
        try:
            state = json.loads((self.root / "state.json").read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return state if state.get("version") == STORE_VERSION else {}

    def _write_state(self, state: Mapping[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        state_bytes = json.dumps({**state, "version": STORE_VERSION}).encode()
        write_atomic(self.root / "state.json", state_bytes, durable=True)

    def _write_table(self, path: Path, table: pa.Table) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Microseconds (the API's precision) rather than pandas' nanoseconds: DuckDB's date
        # functions, Spark and older readers take them as ordinary timestamps.
        write_atomic(
            path,
            lambda temp: pq.write_table(
                table, temp, coerce_timestamps="us", allow_truncated_timestamps=True
            ),
            durable=True,
        )

    def _read(self, paths: list[Path]) -> pd.DataFrame:
        """The rows of ``paths`` in that order, as one frame with the history's dtypes.

        One Arrow table and one conversion: cheaper than a frame per file.
        """
        return frame_from_table(self._read_table(paths))

    def _read_table(self, paths: list[Path], newest_first: bool = False) -> pa.Table:
        """The rows of ``paths``, in that order or (``newest_first``) the file holding the
        newest generation first, in ``STORED_SCHEMA`` (files written by older versions, from
        pandas, keep categories as dictionaries: cast back to plain text).

        Each file is sorted newest first (as the list endpoint sends it), so ordering the
        files by their first row usually leaves the whole table sorted.
        """
        tables = [
            pq.read_table(p, columns=STORED_SCHEMA.names).cast(STORED_SCHEMA)
            for p in paths
            if p.exists()
        ]
        if newest_first:
            tables = [t for t in tables if t.num_rows]
            tables.sort(key=lambda t: t.column("created_at")[0].value or 0, reverse=True)
        return pa.concat_tables(tables) if tables else STORED_SCHEMA.empty_table()

    def _all_ids(self) -> set[str]:
        return self._ids(None)

    def _stored_ids(self, since: str | None = None, only: set[str] | None = None) -> set[str]:
        """Ids of stored rows a sync from ``since`` can meet again, or of those among ``only``
        (Parquet statistics skip the rest, so this stays small however long the history is)."""
        if since is None and only is None:
            return set()
        if only is not None:
            return self._ids([("id", "in", sorted(only))])
        return self._ids([("created_at", ">", pd.Timestamp(str(since)).tz_convert("UTC"))])

    def _ids(self, where: list[tuple[str, str, Any]] | None) -> set[str]:
        ids: set[str] = set()
        for path in self.segments():
            table = pq.read_table(path, columns=["id"], filters=where)
            ids.update(table.column("id").to_pylist())
        return ids

    def clear(self) -> None:
        """Forget everything stored here (the next sync fetches the whole history again)."""
        shutil.rmtree(self.root, ignore_errors=True)

    # --- sync ------------------------------------------------------------------------------

    def sync(
        self,
        client: Client | AsyncClient,
        *,
        chunk_pages: int = 100,
        on_page: Callable[[Page], Any] | None = None,
    ) -> SyncResult:
        """Fetch what is new since the last sync (or resume the one that was interrupted).

        Two steps: every generation created after the newest one stored (page by page, saved
        every ``chunk_pages`` pages), then the ones that were pending last time: one list query
        for those still pending and a single GET for each that has settled since. A sync
        blocks (it writes files as it goes): an ``AsyncClient`` is read through its blocking
        twin.
        """
        client = client._sync_twin()
        self.root.mkdir(parents=True, exist_ok=True)
        self._remove_temporaries()
        state = self._state()
        if not state:
            self._reset_files()
        resume = state.get("resume")
        resumed = resume is not None
        if resume is None:
            resume = {"since": state.get("since"), "cursor": None, "head": None}
            _discard(self.root / "open-next.parquet")
        # Rows this sync can meet again: those after its start, or (a first sync resumed) all
        # it stored before it was interrupted.
        if resume["since"] is None and resumed:
            stored_ids = self._all_ids()
        else:
            stored_ids = self._stored_ids(since=resume["since"])
        fetched = stored = 0
        chunk: list[Page] = []
        pages = self._pages(client, resume["since"], resume["cursor"])
        saving: Future[int] | None = None
        # A chunk is stored on a helper thread while the next one is fetched (fetching mostly
        # waits on the service). One chunk at a time, in order, and each chunk's resume point
        # is written after its rows: a sync stopped anywhere resumes where its rows end. On
        # any error the chunk being stored is finished first (the pool's exit waits for it).
        with ThreadPoolExecutor(1, thread_name_prefix="mediagen-history-store") as saver:
            for page, cursor in pages:
                if on_page is not None:
                    on_page(page)
                fetched += len(page)
                if len(page) and resume["head"] is None:
                    resume["head"] = page.first_created_at()
                chunk.append(page)
                if len(chunk) >= chunk_pages or cursor is None:
                    if saving is not None:
                        stored += saving.result()
                    progress = {**state, "resume": {**resume, "cursor": cursor}}
                    saving = saver.submit(self._save_chunk, chunk, stored_ids, progress)
                    chunk = []
            if saving is not None:
                stored += saving.result()
        refreshed, stored_late = self._refresh_pending(client)
        return self._finish(resume, fetched + refreshed, stored + stored_late, resumed)

    def _pages(
        self, client: Client, since: str | None, cursor: str | None, **filters: Any
    ) -> Iterator[tuple[Page, str | None]]:
        """(page, cursor of the page after it or None at the end), from ``cursor`` on."""
        params = {**filters, "created_after": since} if since is not None else filters
        for page in iter_generation_pages(client, params, after=cursor):
            yield page, page.next_cursor

    def _save_chunk(
        self, pages: list[Page], stored_ids: set[str], progress: Mapping[str, Any]
    ) -> int:
        """Store one chunk of pages, then the state that resumes after it."""
        items = pa.chunked_array([page.items for page in pages], type=ITEM)
        stored = self._save_rows(first_of_each_id(stored_table(items)), stored_ids)
        self._write_state(progress)
        return stored

    def _save_rows(self, table: pa.Table, stored_ids: set[str]) -> int:
        """Store the new settled rows as one segment; add the pending ones to open-next."""
        pending = pc.fill_null(pc.equal(table.column("status"), "pending"), False).to_numpy(
            zero_copy_only=False
        )
        keep = ~pending
        if stored_ids:
            # Membership in a Python set, row by row: an isin would copy the growing set into
            # an array for every chunk (quadratic over a long first sync).
            ids = table.column("id").to_pylist()
            keep &= np.fromiter((i not in stored_ids for i in ids), dtype=bool, count=len(ids))
        settled = table.filter(pa.array(keep))
        if settled.num_rows:
            number = _next_segment_number(self.segments())
            self._write_table(self._settled_dir / f"part-{number:06d}.parquet", settled)
            stored_ids.update(settled.column("id").to_pylist())
        if pending.any():
            seen = self._read([self.root / "open-next.parquet"])
            fresh = frame_from_table(table.filter(pa.array(pending)))
            merged = concat_history([seen, fresh]).drop_duplicates("id", keep="last")
            self._write_table(self.root / "open-next.parquet", table_of(merged))
        return settled.num_rows

    def _refresh_pending(self, client: Client) -> tuple[int, int]:
        """The generations pending at the last sync and older than this one's window.

        One list query (``status=pending``) tells which are still pending; each of the others
        has settled and is fetched once by id. Returns (rows fetched, rows stored).
        """
        old = self._read([self.root / "open.parquet"])
        seen = self._read([self.root / "open-next.parquet"])["id"]
        old = old[~old["id"].isin(seen)]
        if len(old):  # settled and stored by a sync that died before renaming its state
            old = old[~old["id"].isin(self._stored_ids(only=set(old["id"])))]
        if old.empty:
            return 0, 0
        since = (old["created_at"].min() - pd.Timedelta(milliseconds=1)).isoformat()
        still: set[str] = set()
        for page, _ in self._pages(client, since, None, status="pending"):
            still.update(page.ids())
        moved = [client.generations.get(i).to_dict() for i in old["id"] if i not in still]
        kept = old[old["id"].isin(still)]
        settled = frame_from_generations(moved)[list(STORED_COLUMNS)]
        stored = self._save_rows(table_of(concat_history([kept, settled])), set())
        return len(still) + len(moved), stored

    def _finish(
        self, resume: Mapping[str, Any], fetched: int, stored: int, resumed: bool
    ) -> SyncResult:
        # What this sync saw pending (new and old) is now the whole of what is pending.
        next_open = self.root / "open-next.parquet"
        if next_open.exists():
            os.replace(next_open, self.root / "open.parquet")
        else:
            _discard(self.root / "open.parquet")
        pending = len(self._read([self.root / "open.parquet"]))
        head = resume.get("head")
        if head is not None:  # created_after is strictly after: step back, de-duplicate by id
            head = (pd.Timestamp(head) - pd.Timedelta(milliseconds=1)).isoformat()
        since = head if head is not None else resume.get("since")
        self._write_state({"since": since, "resume": None, "synced": True})
        return SyncResult(fetched=fetched, stored=stored, pending=pending, resumed=resumed)

    def _reset_files(self) -> None:
        shutil.rmtree(self._settled_dir, ignore_errors=True)
        for name in ("open.parquet", "open-next.parquet"):
            _discard(self.root / name)

    def _remove_temporaries(self) -> None:
        """Temporary files a killed sync left behind (never renamed, so never read)."""
        for folder in (self.root, self._settled_dir):
            if folder.is_dir():
                for leftover in folder.glob(".*.part-*"):
                    _discard(leftover)

    # --- reading ---------------------------------------------------------------------------

    def frame(self) -> pd.DataFrame:
        """Every stored generation (settled, then those pending at the last sync), newest first.

        Columns are the service's (``mediagen.history.HISTORY_COLUMNS`` minus the journal's).
        Each segment holds a run of the list endpoint's order (newest first), so reading the
        segments by their newest row usually leaves nothing to sort.
        """
        settled = frame_from_table(self._read_table(self.segments(), newest_first=True))
        pending = self._read([self.root / "open.parquet"])
        if len(pending):  # a row settled and stored by a sync that died before its state
            known = set(settled.loc[settled["id"].isin(pending["id"]), "id"])
            pending = pending[~pending["id"].isin(known)]
            settled = concat_history([pending, settled])
        if settled["created_at"].is_monotonic_decreasing:
            return settled  # the usual case: nothing to sort
        ordered = settled.sort_values("created_at", ascending=False, kind="stable")
        return ordered.reset_index(drop=True)

    def connect(self) -> Any:
        """A DuckDB connection with a ``generations`` view over the store (nothing loaded).

        The view de-duplicates by id (a settled row wins over a pending one), so queries see
        each generation once, even after an interrupted sync.
        """
        import duckdb

        con = duckdb.connect()
        parts = []
        settled = [str(p) for p in self.segments()]
        if settled:
            con.read_parquet(settled).create_view("_settled")
            parts.append("SELECT * FROM _settled")
        pending = self._read([self.root / "open.parquet"])
        if len(pending):  # without rows settled meanwhile (a sync that died before its state)
            pending = pending[~pending["id"].isin(self._stored_ids(only=set(pending["id"])))]
        if len(pending) or not parts:
            con.register("_open", _micro(table_of(pending)))
            parts.append("SELECT * FROM _open")
        # The view is a plain union: no join against the settled ids, which would hold every
        # id of the history in memory at once.
        con.execute("CREATE VIEW generations AS " + " UNION ALL BY NAME ".join(parts))
        return con

    def export_team(self, folder: str | os.PathLike[str], *, member: str) -> list[Path]:
        """This store's settled history as ``member``'s part of a team folder (``export_team``)."""
        return export_team(self, folder, member=member)

    def sql(self, query: str) -> pd.DataFrame:
        """Run SQL over the store's ``generations`` view with DuckDB; the answer as pandas."""
        con = self.connect()
        try:
            return con.sql(query).df()
        finally:
            con.close()


def export_team(store: HistoryStore, folder: str | os.PathLike[str], *, member: str) -> list[Path]:
    """Write ``store``'s settled history into a team's shared folder as one member's part.

    The folder is a hive-partitioned Parquet dataset, ``member=<member>/month=<YYYY-MM>/``,
    which DuckDB (``read_parquet('folder/**/*.parquet', hive_partitioning=true)``), Polars,
    pandas (``pd.read_parquet(folder)``) and Spark (``spark.read.parquet(folder)``) read as one
    table with ``member`` and ``month`` columns. Exporting again replaces this member's files
    (never another member's), so a re-export never doubles a row. Months are UTC months.
    """
    import pyarrow.dataset as ds

    if not member or "/" in member or member.startswith("."):
        raise ValueError(f"member must be a plain name (a folder is made of it), not {member!r}")
    frame = store.frame()
    frame = frame[frame["status"].astype(object) != "pending"]
    months = frame["created_at"].dt.tz_convert("UTC").dt.strftime("%Y-%m")
    table = table_of(frame).append_column("month", pa.array(months.astype(str).tolist()))
    root = Path(folder).expanduser() / f"member={member}"
    shutil.rmtree(root, ignore_errors=True)
    ds.write_dataset(
        table,
        root,
        format="parquet",
        partitioning=ds.partitioning(pa.schema([("month", pa.string())]), flavor="hive"),
        basename_template="part-{i}.parquet",
        existing_data_behavior="delete_matching",
        file_options=ds.ParquetFileFormat().make_write_options(
            coerce_timestamps="us", allow_truncated_timestamps=True
        ),
    )
    return sorted(root.rglob("*.parquet"))


def read_team(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """Every member's exported history in ``folder`` as one frame (``member``, ``month`` added)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(Path(folder).expanduser(), format="parquet", partitioning="hive")
    frame = dataset.to_table().to_pandas()
    extra = frame[["member", "month"]].astype(str)
    return pd.concat([_schema.apply_history_dtypes(frame[list(STORED_COLUMNS)]), extra], axis=1)


def table_of(frame: pd.DataFrame) -> pa.Table:
    """The service's columns of a history frame as an Arrow table in ``STORED_SCHEMA``."""
    table = pa.Table.from_pandas(frame[list(STORED_COLUMNS)], preserve_index=False)
    return table.cast(STORED_SCHEMA)


def _micro(table: pa.Table) -> pa.Table:
    """``table`` with nanosecond timestamps as microseconds, like the files the store writes."""
    fields = [
        f.with_type(pa.timestamp("us", tz=f.type.tz)) if pa.types.is_timestamp(f.type) else f
        for f in table.schema
    ]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def _segment_number(path: Path) -> int:
    try:
        return int(path.stem.split("-")[1])
    except (IndexError, ValueError):
        return -1


def _next_segment_number(segments: list[Path]) -> int:
    return (_segment_number(segments[-1]) + 1) if segments else 0


def _discard(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def store_for(client: object) -> HistoryStore | None:
    """The client's history store, or None for what has no cache folder of its own (a page
    source, a stand-in): those are read from the service directly."""
    from mediagen.client import AsyncClient, Client

    if not isinstance(client, (Client, AsyncClient)):
        return None
    return HistoryStore.for_client(client)


def stored_frame(
    client: Client | AsyncClient,
    *,
    sync: bool = True,
    rebuild: bool = False,
    journal: Any = _USE_CLIENT_JOURNAL,
    on_page: Callable[[Page], Any] | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """The client's history from its local store, synced first (the default), newest first.

    ``sync=False`` reads what is stored without asking the service (offline); ``rebuild=True``
    forgets the store and fetches everything again. ``filters`` are the list endpoint's
    (``status``, ``type``, ``model``, ``created_after``), applied to the stored rows.
    ``journal`` as in ``generations_frame``.
    """
    store = HistoryStore.for_client(client)
    if rebuild:
        store.clear()
    if sync:
        store.sync(client, on_page=on_page)
    frame = store.frame()
    params = _filter_params(filters)
    if params:
        frame = _filtered(frame, params)
    if journal is _USE_CLIENT_JOURNAL:
        journal = getattr(client, "journal", None)
    return join_journal(frame, journal)


def _filtered(frame: pd.DataFrame, params: Mapping[str, Any]) -> pd.DataFrame:
    keep = pd.Series(True, index=frame.index)
    for column in ("status", "type", "model"):
        if column in params:
            keep &= frame[column].astype(object) == params[column]
    if "created_after" in params:
        keep &= frame["created_at"] > pd.Timestamp(params["created_after"]).tz_convert("UTC")
    return frame[keep].reset_index(drop=True)


def sql(
    query: str,
    client: Client | AsyncClient | None = None,
    *,
    store: HistoryStore | None = None,
    sync: bool = True,
):
    """Answer SQL over the history store's ``generations`` view (DuckDB), as a DataFrame.

    Nothing is loaded into memory but the answer, so this works on histories larger than RAM:
    ``sql("SELECT model, date_trunc('week', created_at) AS week, sum(credits_charged) ...
    FROM generations GROUP BY ALL")``. Give ``client`` (synced first unless ``sync=False``)
    or a ``store``. Columns: those of ``mediagen.history.HISTORY_COLUMNS`` that come from the
    service (id, type, status, model, mode, prompt, created_at, completed_at, latency_s,
    credits_charged, error_code, error_message, n_outputs, output_seconds, width, height,
    idempotency_key).
    """
    if store is None:
        if client is None:
            raise TypeError("sql() needs a client (to find and sync its store) or a store")
        store = HistoryStore.for_client(client)
        if sync:
            store.sync(client)
    return store.sql(query)

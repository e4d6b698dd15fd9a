"""A table's plan: every row checked and priced before anything runs, then run once per row.

``plan(df, model=..., prompt="{caption}")`` builds one request per row (``_fields``), checks
each distinct request with the catalog's own rules (the same check a batch makes before it
sends), and prices each distinct quote once with the service's estimate: rows whose price
depends on the same things share one estimate request, so a 10,000-row table with one setting
costs one quote, not 10,000. ``Plan.run`` checks the total against ``budget=`` and every active
budget or ``SpendLimit`` before the first submit, then runs the rows in blocks through
``run_rows`` and appends each block to a Parquet results file beside the media.
"""

from __future__ import annotations

import os
import time
import uuid
import weakref
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from mediagen.datasets._fields import PlanError, PlanSpec
from mediagen.datasets._keys import canonical, row_key, row_keys
from mediagen.datasets._rows import check_output_dir, run_rows
from mediagen.datasets._schema import RESULT_COLUMNS
from mediagen.display._progress import format_seconds

if TYPE_CHECKING:
    import pandas as pd

    from mediagen.client import Client, RateStatus

#: rows per block of a run: each block's results are appended to the Parquet file as it ends
BLOCK = 2000
#: the name of the results file in ``output_dir``
RESULTS_FILE = "results.parquet"
#: distinct requests whose check a plan remembers (a table of distinct rows checks each anyway)
VERDICTS = 1024
#: row keys made at a time by a plan
KEYS_AT_ONCE = 10_000

__all__ = ["Plan", "PlanError", "PlanSpec", "generate", "plan"]


def _client(client: Client | None) -> Client:
    if client is not None:
        return client
    from mediagen.client import Client

    return Client()


def _problems(client: Client, request: dict[str, Any], entries: dict[str, Any]) -> list[str]:
    """What the catalog's rules say of one request (the batch's own local check)."""
    from mediagen.client import NotFoundError, _batch

    model = request.get("model")
    if not isinstance(model, str) or not model:
        return ["model: a request needs a 'model'"]
    if model not in entries:
        try:
            entries[model] = client.models.get(model)
        except NotFoundError:
            entries[model] = None
    entry = entries[model]
    if entry is None:
        return [f"model: no model {model!r} in the catalog"]
    found = _batch._local_problems(client, entry, request, str(entry.type))
    return [f"{_field(problem['loc'])}: {problem['msg']}" for problem in found]


def _field(loc: Any) -> str:
    """A problem's field as the caller wrote it (the service's ``body.`` left off)."""
    parts = [str(p) for p in loc]
    return ".".join(parts[1:] if parts[:1] == ["body"] and len(parts) > 1 else parts)


def _quote_key(request: dict[str, Any], entry: Any) -> str:
    """What a request's price depends on: its model and its estimate query."""
    return canonical({"model": request.get("model"), "q": entry.catalog.estimate_query(request)})


class Plan:
    """A priced table: ``total`` (credits), ``requests`` (one per row), ``run(...)``."""

    def __init__(
        self,
        client: Client,
        spec: PlanSpec,
        requests: pd.DataFrame,
        modes: list[str | None],
        run_id: str,
        made_run_id: bool,
    ) -> None:
        self.client = client
        self.spec = spec
        self.requests = requests
        self._modes = modes
        #: the run id the keys of ``requests`` belong to (made when none was given)
        self.run_id = run_id
        self._made_run_id = made_run_id
        #: what shows a run's progress besides the bar (a plan's live view): called with one
        #: line as each row ends, held weakly so a closed view is let go
        self._watchers: weakref.WeakSet[Any] = weakref.WeakSet()

    def watch_runs(self, view: Any) -> None:
        """``view.show_progress(line)`` is called as each row of a run ends (and at its end);
        held weakly."""
        self._watchers.add(view)

    @property
    def runnable(self) -> pd.DataFrame:
        """The rows that will be sent (all, unless ``on_invalid="skip"`` left some out)."""
        if "valid" in self.requests.columns:
            return self.requests[self.requests["valid"]]
        return self.requests

    @property
    def total(self) -> float:
        """The price of every row that will be sent (the service's estimates), in credits."""
        return round(float(self.runnable["estimate"].sum()), 2)

    def counts(self) -> pd.DataFrame:
        """Rows and credits per model and mode."""
        import pandas as pd

        rows = self.runnable
        frame = pd.DataFrame(
            {
                "model": [r.get("model") for r in rows["request"]],
                "mode": [m or "" for m, ok in zip(self._modes, self._valid(), strict=True) if ok],
                "credits": rows["estimate"].to_numpy(),
            }
        )
        return frame.groupby(["model", "mode"]).agg(
            rows=("credits", "size"), credits=("credits", "sum")
        )

    def _valid(self) -> list[bool]:
        if "valid" in self.requests.columns:
            return [bool(v) for v in self.requests["valid"]]
        return [True] * len(self.requests)

    def forecast(self) -> Any:
        """How long the table will take, from this client's settled history (a
        ``BatchForecast``; it says so when the history is too short)."""
        from mediagen.history import forecast

        requests = [
            {"model": r.get("model"), "mode": m}
            for r, m, ok in zip(self.requests["request"], self._modes, self._valid(), strict=True)
            if ok
        ]
        return forecast(requests, self.client, sync=False)

    def __repr__(self) -> str:
        skipped = len(self.requests) - len(self.runnable)
        text = f"Plan({len(self.runnable)} rows, {self.total:g} credits"
        return text + (f", {skipped} invalid rows skipped)" if skipped else ")")

    def _repr_html_(self) -> str:
        from mediagen.datasets._view import plan_html

        return plan_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """In a notebook the widget view (with its snapshot as HTML), else the static HTML."""
        from mediagen.datasets import _display_hook

        view = _display_hook.view(self)
        if view is None:
            return {"text/plain": repr(self), "text/html": self._repr_html_()}
        return view._repr_mimebundle_()

    def _display_(self) -> Any:
        """marimo's display protocol: the plan's widget in a marimo notebook (marimo renders an
        anywidget, not a widget-view bundle), else this plan's static HTML."""
        from mediagen.datasets import _display_hook

        view = _display_hook.view(self)
        if view is not None:
            return view
        from marimo import Html

        return Html(self._repr_html_())

    def _ipython_display_(self) -> None:
        """In a notebook the widget and its snapshot output; elsewhere the static HTML."""
        from IPython.display import display

        from mediagen.datasets import _display_hook

        view = _display_hook.view(self)
        if view is None:
            display({"text/plain": repr(self), "text/html": self._repr_html_()}, raw=True)
        else:
            view._ipython_display_()

    def run(
        self,
        *,
        budget: float | None = None,
        run_id: str | None = None,
        output_dir: str | os.PathLike[str] | None = None,
        concurrency: int = 8,
        retry_failed: bool = False,
        progress: bool = True,
    ) -> pd.DataFrame:
        """Run every valid row once and return the results (``df``'s index, ``RESULT_COLUMNS``).

        The same call again (same ``run_id``) submits nothing that exists already: finished
        rows are read back, running ones watched. Without ``run_id`` a new one is made and
        printed (``plan.run_id``); pass it to resume. ``retry_failed=True`` gives rows whose
        generation failed a new key (derived from the failed generation, so it too is the
        same on every re-run). The total is checked against ``budget`` and every active budget
        before anything is sent (``BudgetExceededError``, nothing sent). ``progress=False``
        hides the progress bar.
        """
        import pandas as pd

        from mediagen.client import _submit
        from mediagen.client._budget import refuse_over

        refuse_over(self.total, _submit._budgets(self.client), budget, "budget")
        target = None if output_dir is None else os.fspath(output_dir)
        check_output_dir(target)
        rows = self.runnable
        rekey = None if run_id is None or run_id == self.run_id else str(run_id)
        if rekey is None and self._made_run_id:
            print(f"run_id={self.run_id!r} (pass it to run again without paying twice)")
        shown = _Progress(len(rows), self.total, progress, self.client.rate_status)
        shown.watchers = list(self._watchers)
        with shown as bar, _ResultsFile(target) as results:
            parts = []
            for block in _blocks(rows, BLOCK, rekey):
                done = run_rows(
                    self.client, block, output_dir=target, concurrency=concurrency,
                    progress=bar.row,
                )  # fmt: skip
                if retry_failed:
                    done = _retry(self.client, block, done, target, concurrency, bar)
                results.append(done)
                parts.append(done)
        out = pd.concat(parts) if parts else _empty(rows.index)
        if target is not None:
            from mediagen.datasets._run_manifest import write_run_manifest

            write_run_manifest(target, out, rekey or self.run_id)
        return _with_skipped(out, self.requests)


def _blocks(rows: pd.DataFrame, size: int, run_id: str | None = None) -> Iterator[pd.DataFrame]:
    """``size`` rows at a time as ``run_rows`` takes them (``request``, ``key``); under another
    ``run_id`` with that run's keys, made as the block starts (plain strings)."""
    import pandas as pd

    for start in range(0, len(rows), size):
        part = rows.iloc[start : start + size]
        if run_id is None:
            yield part[["request", "key"]]
            continue
        keys = row_keys(run_id, part.index, part["request"])
        yield pd.DataFrame(
            {"request": part["request"], "key": pd.Series(keys, index=part.index, dtype=object)}
        )


#: how many new keys ``retry_failed`` gives a row in one call at most
RETRIES = 3


def _retry(
    client: Client,
    block: pd.DataFrame,
    done: pd.DataFrame,
    target: str | None,
    concurrency: int,
    bar: _Progress,
) -> pd.DataFrame:
    """Rows whose generation failed, sent again under a key derived from that generation."""
    done = done.copy()
    for _ in range(RETRIES):
        failed = (done["status"] == "failed").to_numpy()
        if not failed.any():
            break
        again = block[failed].copy()
        again["key"] = [
            row_key(f"{key}/after/{gid}", label, request)
            for key, gid, label, request in zip(
                again["key"], done["generation_id"][failed], again.index, again["request"],
                strict=True,
            )
        ]  # fmt: skip
        fresh = run_rows(client, again, output_dir=target, concurrency=concurrency)
        done.loc[failed, list(RESULT_COLUMNS)] = fresh.to_numpy()
        block = block.copy()
        block.loc[failed, "key"] = again["key"].to_numpy()
    return done.astype(RESULT_COLUMNS)


def _empty(index: Any) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in RESULT_COLUMNS.items()}).set_axis(
        index[:0]
    )


def _with_skipped(out: pd.DataFrame, requests: pd.DataFrame) -> pd.DataFrame:
    """The skipped rows back in their places, ``status`` "skipped" and the problem as error."""
    if "valid" not in requests.columns or requests["valid"].all():
        return out
    import numpy as np
    import pandas as pd

    valid = requests["valid"].to_numpy(dtype=bool)
    skipped = requests[~valid]
    extra = _empty(skipped.index).reindex(skipped.index)
    extra["status"] = "skipped"
    extra["credits"] = 0.0
    extra["error_code"] = "invalid_request"
    extra["error"] = skipped["problem"].astype("string")
    merged = pd.concat([out, extra.astype(RESULT_COLUMNS)])
    places = np.concatenate([np.flatnonzero(valid), np.flatnonzero(~valid)])
    return merged.iloc[np.argsort(places, kind="stable")]


class _Progress:
    """One bar for the run: done / failed / spent, the time left from the rate so far, and the
    key's pace once its rate limit holds the run (so a slow run reads as held, not stuck)."""

    def __init__(
        self, rows: int, total: float, show: bool, rate: Callable[[], RateStatus] | None = None
    ) -> None:
        from mediagen.display._progress import progress

        self.bar = progress("Running table", total=rows, unit="row") if show else None
        self.rate = rate
        #: the plan's live views, told each line too
        self.watchers: list[Any] = []
        self.rows = rows
        self.started = time.monotonic()
        self.done = 0
        self.total = total
        self.failed = 0
        self.spent = 0.0

    def row(self, label: Hashable, record: dict[str, Any]) -> None:
        if record["status"] != "completed":
            self.failed += 1
        self.spent += float(record["credits"] or 0.0)
        self.done += 1
        message = f"{self.failed} failed, {self.spent:g} of {self.total:g} credits"
        if self.done < self.rows:
            left = (time.monotonic() - self.started) / self.done * (self.rows - self.done)
            message += f", ~{format_seconds(left)} left"
        held = self.rate().describe() if self.rate is not None else ""
        if held:
            message += f" ({held})"
        if self.bar is not None:
            self.bar.advance(message=message)
        self._tell(f"{self.done}/{self.rows} rows: {message}")

    def _tell(self, line: str) -> None:
        for view in self.watchers:
            view.show_progress(line)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        summary = f"{self.done} rows, {self.failed} failed, {self.spent:g} credits"
        if self.bar is not None:
            self.bar.close(summary, ok=exc[0] is None)
        ended = "done" if exc[0] is None else "stopped"
        self._tell(f"Run {ended}: {summary} in {format_seconds(time.monotonic() - self.started)}")


class _ResultsFile:
    """``output_dir/results.parquet``, one row group per block as the block ends (written to
    a temporary name and put in place when the run ends, so a reader never sees half a file)."""

    def __init__(self, output_dir: str | None) -> None:
        self.output_dir = output_dir
        self.writer: Any = None
        self.handle: Any = None

    def __enter__(self) -> _ResultsFile:
        return self

    def _open(self, schema: Any) -> None:
        import fsspec
        import pyarrow.parquet as pq

        assert self.output_dir is not None
        fs, root = fsspec.core.url_to_fs(self.output_dir)
        fs.makedirs(root, exist_ok=True)
        self.fs, self.final = fs, root.rstrip("/") + "/" + RESULTS_FILE
        self.temp = self.final + ".partial"
        self.handle = fs.open(self.temp, "wb")
        self.writer = pq.ParquetWriter(self.handle, schema)

    def append(self, frame: pd.DataFrame) -> None:
        if self.output_dir is None:
            return
        import pyarrow as pa

        table = pa.Table.from_pandas(frame.rename_axis("row").reset_index(), preserve_index=False)
        if self.writer is None:
            self._open(table.schema)
        self.writer.write_table(table.cast(self.writer.schema))

    def __exit__(self, *exc: Any) -> None:
        if self.writer is None:
            return
        self.writer.close()
        self.handle.close()
        self.fs.mv(self.temp, self.final)


def plan(
    df: pd.DataFrame,
    client: Client | None = None,
    *,
    on_invalid: Literal["raise", "skip"] = "raise",
    run_id: str | None = None,
    **fields: Any,
) -> Plan:
    """Check and price one request per row of ``df``; nothing is submitted.

    Each keyword is a request field: a constant, a string with ``{column}`` placeholders
    (formatted per row) or ``mediagen.col("column")`` (the row's value as is). A table with
    invalid rows raises :class:`PlanError` naming each row and field (``on_invalid="skip"``
    plans the rest and marks them: ``requests["valid"]``, ``requests["problem"]``).
    """
    import pandas as pd

    if on_invalid not in ("raise", "skip"):
        raise ValueError("on_invalid is 'raise' or 'skip'")
    if "model" not in fields:
        raise PlanError("a plan needs a model", [(None, "model", "pass model=...")])
    if not df.index.is_unique:
        repeated = list(dict.fromkeys(df.index[df.index.duplicated()]))[:5]
        raise PlanError(
            "each row needs a label of its own: its key is made from it (df.reset_index())",
            [(label, "index", "this label is used by more than one row") for label in repeated],
        )
    client = _client(client)
    spec = PlanSpec(dict(fields))
    requests = list(spec.requests(df))
    entries: dict[str, Any] = {}
    verdicts: dict[str, tuple[str, ...]] = {}
    problems: list[tuple[Hashable | None, str, str]] = []
    texts: list[str] = []
    for label, request in zip(df.index, requests, strict=True):
        key = canonical(request)
        if key not in verdicts:
            if len(verdicts) >= VERDICTS:  # a table of distinct rows: hold a few, not all
                verdicts.clear()
            verdicts[key] = tuple(_problems(client, request, entries))
        found = verdicts[key]
        texts.append("; ".join(found))
        problems += [(label, *text.split(": ", 1)) for text in found]
    if problems and on_invalid == "raise":
        raise PlanError(
            f"{len({p[0] for p in problems})} of {len(df)} rows are invalid (nothing was sent)",
            problems,
        )
    valid = [not text for text in texts]
    estimates, modes = _price(client, requests, valid, entries)
    frame = pd.DataFrame({"request": requests, "estimate": estimates}, index=df.index)
    made = run_id is None
    run_id = "run-" + uuid.uuid4().hex[:12] if run_id is None else str(run_id)
    frame.insert(1, "key", _key_column(run_id, df.index, requests))
    if on_invalid == "skip":
        frame["valid"] = valid
        frame["problem"] = pd.array([t or None for t in texts], dtype="string")
    return Plan(client, spec, frame, modes, run_id, made)


def _key_column(run_id: str, index: pd.Index, requests: list[Any]) -> Any:
    """Each row's key, made ``KEYS_AT_ONCE`` rows at a time, so the Python strings of all the
    keys are never held at once beside the column pandas keeps (Arrow strings, from pandas 3)."""
    import pandas as pd

    parts = [
        pd.Series(row_keys(run_id, index[at : at + KEYS_AT_ONCE], requests[at : at + KEYS_AT_ONCE]))
        for at in range(0, len(requests), KEYS_AT_ONCE)
    ]
    return pd.concat(parts, ignore_index=True).array if parts else []


def _price(
    client: Client, requests: list[dict[str, Any]], valid: list[bool], entries: dict[str, Any]
) -> tuple[list[float], list[str | None]]:
    """Each valid row's estimate (one quote per distinct price query) and its mode."""
    quotes: dict[str, float] = {}
    estimates: list[float] = []
    modes: list[str | None] = []
    for request, ok in zip(requests, valid, strict=True):
        if not ok:
            estimates.append(0.0)
            modes.append(None)
            continue
        entry = entries[request["model"]]
        mode = entry.catalog.mode_for(request)
        modes.append(None if mode is None else mode.get("id"))
        key = _quote_key(request, entry)
        if key not in quotes:
            quote = client.models.estimate_request(request)
            quotes[key] = float(quote.credits_after_discount or 0.0)
        estimates.append(quotes[key])
    return estimates, modes


def generate(
    df: pd.DataFrame,
    client: Client | None = None,
    *,
    on_invalid: Literal["raise", "skip"] = "raise",
    budget: float | None = None,
    run_id: str | None = None,
    output_dir: str | os.PathLike[str] | None = None,
    concurrency: int = 8,
    retry_failed: bool = False,
    progress: bool = True,
    **fields: Any,
) -> pd.DataFrame:
    """``plan(df, ...)`` then ``.run(...)`` in one call."""
    made = plan(df, client, on_invalid=on_invalid, run_id=run_id, **fields)
    return made.run(
        budget=budget, output_dir=output_dir, concurrency=concurrency,
        retry_failed=retry_failed, progress=progress,
    )  # fmt: skip

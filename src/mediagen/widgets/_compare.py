"""``compare(prompts, models)``: a prompt x model grid, priced before it runs.

Rows are prompts, columns are models or model settings (``models=`` or ``settings=``, one
argument under two names), each cell one generation. On creation the grid
asks the service for the estimate of each distinct request and sums them (the exact total), and
forecasts the wall time from the user's own history where there is enough of it. Nothing is
sent until :meth:`Compare.run` (the Run button, or ``run=True``), and then only within
``budget`` (a :class:`mediagen.Budget` or a number of credits): a run the budget cannot cover is
refused whole, and each submit still reserves its price against it.

Running, cells fill in as their jobs end (media fetched lazily by the view, from the client's
cache, as in the gallery), with the charge and the latency; a failed cell shows its error code
and a Retry that submits that cell again, once per click. At most ``concurrency`` jobs are in
flight; the client's own retry waits out a 429. All of it runs as tasks on the kernel's loop, so
the notebook stays usable.

Judging: one winner per row (a click), and besides it a 1-5 rating for any finished cell.
Results come back into Python without a front end: :attr:`Compare.results` is a DataFrame of
every cell, :attr:`Compare.choices` the cells the user judged (each row's winner and every
rated cell, with the rating). The grid's own buttons add a column, run a row or a column again
and export the HTML report, as the methods of the same names do from code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from mediagen.client import Budget, Client, budget as budget_scope
from mediagen.client._submit import new_idempotency_key
from mediagen.display import _html
from mediagen.display._html import plural
from mediagen.pricing.catalog import Catalog
from mediagen.widgets import _compare_store, _tasks
from mediagen.widgets._base import EchoedToPage, MediagenWidget, _describe
from mediagen.widgets._compare_plan import Plan, cell_request, columns_of, plan, request_key
from mediagen.widgets._compare_snapshot import grid_html, report_html
from mediagen.widgets._loop_client import on_loop
from mediagen.widgets._media import MediaSource
from mediagen.widgets._outputs import credentials, fetched, item_at
from mediagen.widgets._rate_note import noting_the_rate
from mediagen.widgets._snapshot import StaticFallback

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Estimate, Generation
    from mediagen.client._batch import AsyncExecutor

#: Cell states, in the order a cell goes through them.
PRICED, QUEUED, SUBMITTING, PENDING, COMPLETED, FAILED, INVALID = (
    "priced", "queued", "submitting", "pending", "completed", "failed", "invalid",
)  # fmt: skip
#: A cell in one of these states is part of a run that has not ended.
RUNNING = (QUEUED, SUBMITTING, PENDING)


class Compare(StaticFallback, MediaSource, EchoedToPage, MediagenWidget):
    _module = "compare.js"
    _stylesheets = ("compare.css",)

    prompts = traitlets.List(traitlets.Unicode()).tag(sync=True)
    columns = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: one dict per cell, row-major: status, estimate, credits, latency, error, media items
    cells = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: estimating | ready | running | done
    phase = traitlets.Unicode("estimating").tag(sync=True)
    #: the exact price of every runnable cell (None until every estimate is in)
    total = traitlets.Float(None, allow_none=True).tag(sync=True)
    forecast_text = traitlets.Unicode("").tag(sync=True)
    #: why Run is refused (over budget...), shown next to the button
    blocked_reason = traitlets.Unicode("").tag(sync=True)
    #: the winner of each row: {"<row>": <column>}
    chosen = traitlets.Dict().tag(sync=True)
    #: the user's 1-5 rating of finished cells: {"<row>,<col>": <stars>}
    ratings = traitlets.Dict().tag(sync=True)
    #: where the last report was exported (as the user named it), shown next to its button
    exported = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        rows: Any,
        settings: Any = None,
        *,
        models: Any = None,
        client: Client | AsyncClient | None = None,
        run: bool = False,
        budget: Budget | float | None = None,
        concurrency: int = 4,
        forecast: bool = True,
        restore: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        #: the client the grid prices and runs with (``Client()`` from the environment when none
        #: is given); its jobs are polled as it is configured to
        self.client: Client | AsyncClient = client if client is not None else Client()
        self.budget = budget if isinstance(budget, Budget) or budget is None else Budget(budget)
        self.concurrency = concurrency
        self.catalogs = _catalogs(self.client)
        self.plan: Plan = plan(rows, columns_given(settings, models), self.catalogs)
        self.generations: dict[tuple[int, int], Generation[AsyncClient]] = {}
        self._cells: dict[tuple[int, int], dict[str, Any]] = {
            position: {"row": position[0], "col": position[1], "status": PRICED, "estimate": None}
            for position in self.plan.requests
        }
        for saved in restore or []:
            _compare_store.restore_cell(self, saved)
        #: the executor of each loop the grid's cells run on (a click and a cell may run on
        #: different ones), so ``concurrency`` holds across runs, reruns and added columns
        self._pools: dict[int, AsyncExecutor] = {}
        self.prompts = list(self.plan.prompts)
        self.columns = [column.describe() for column in self.plan.columns]
        self._publish()
        self.on_msg(self._on_view_message)
        self.task: _tasks.Handle | None = None
        self._loop = _tasks.current_loop()
        self.ready = _tasks.spawn(self._prepare(run, forecast), reporter=self._failed("Pricing"))

    # -- before running: prices and the forecast -------------------------------------------

    async def _prepare(self, run: bool, forecast: bool) -> None:
        await self._price([p for p, c in self._cells.items() if c["estimate"] is None])
        unfinished = [p for p, c in self._cells.items() if c["status"] in RUNNING]
        if unfinished:  # a reopened run saved mid-way: follow its jobs (same keys, same jobs)
            self.phase = "running"
            self.task = _tasks.spawn(self._run_cells(unfinished), reporter=self._failed("Resume"))
        if forecast:
            self.forecast_text = await self._forecast()
        if run:
            self.run()

    async def _price(self, positions: list[tuple[int, int]]) -> None:
        """Ask the service's price of each distinct request among ``positions`` once."""
        self.phase = "estimating"
        distinct = {request_key(self.plan.requests[p]): self.plan.requests[p] for p in positions}
        client = on_loop(self.client)

        async def quote(body: dict[str, Any]) -> Estimate | BaseException:
            try:
                return await client.models.estimate_request(body)
            except Exception as exc:
                return exc

        keys = list(distinct)
        async with client.executor(self.concurrency) as pool:
            quotes = await asyncio.gather(*(pool.submit(quote, distinct[k]) for k in keys))
        answers = dict(zip(keys, quotes, strict=True))
        for position in positions:
            answer = answers[request_key(self.plan.requests[position])]
            if isinstance(answer, BaseException):
                self._cells[position].update(status=INVALID, **_error_of(answer))
            else:
                self._cells[position]["estimate"] = answer.credits_after_discount
        self.total = _sum(c["estimate"] for c in self._cells.values() if c["status"] != INVALID)
        self.phase = "ready" if self.runnable else "done"
        self._publish()

    def add_column(self, setting: Any) -> _tasks.Handle:
        """A new setting for every row, priced; the next Run pays for its cells only."""
        column = columns_of([*(c.fields for c in self.plan.columns), setting])[-1]
        if column.model not in self.catalogs:
            raise ValueError(f"unknown model {column.model!r}")
        col = len(self.plan.columns)
        self.plan.columns.append(column)
        for row, prompt in enumerate(self.plan.prompts):
            body = cell_request(self.catalogs[column.model], column, prompt)
            self.plan.requests[(row, col)] = body
            self._cells[(row, col)] = {"row": row, "col": col, "status": PRICED, "estimate": None}
        self.columns = [c.describe() for c in self.plan.columns]
        self._publish()  # the new cells show (being priced) with their column, never after it
        new = [(row, col) for row in range(len(self.plan.prompts))]
        self.ready = _tasks.spawn(self._price(new), reporter=self._failed("Pricing"))
        return self.ready

    async def _forecast(self) -> str:
        """The history-based wall time; the grid works without it (a new user has no history)."""
        from mediagen.history import forecast

        requests = [self.plan.requests[p] for p in self.runnable]
        try:
            found = await asyncio.to_thread(forecast, requests, self.client)
        except Exception as exc:  # a forecast is advice: say why there is none, never fail
            return f"No time forecast ({_describe(exc)})"
        return found.summary()

    # -- running ---------------------------------------------------------------------------

    @property
    def runnable(self) -> list[tuple[int, int]]:
        """Cells a Run would submit now (priced ones not yet run, and failed ones)."""
        return [p for p, c in self._cells.items() if c["status"] == PRICED]

    def run(self) -> _tasks.Handle | None:
        """Submit every priced cell (the Run button); refused whole if over the budget."""
        if self.phase != "ready" or not self.runnable:
            return self.task
        if self._refused(self.runnable):
            return None
        self.phase = "running"
        self.task = _tasks.spawn(
            self._run_cells(self._queue(self.runnable)), reporter=self._failed("Run")
        )
        return self.task

    def rerun(self, *, row: int | None = None, col: int | None = None) -> _tasks.Handle | None:
        """Run one row or one column again: new generations, paid again, within the budget.

        The cells keep their results when the budget refuses (nothing is reset or sent).
        """
        if self.phase not in ("ready", "done"):
            return None
        again = [
            p
            for p, cell in self._cells.items()
            if (row is None or p[0] == row)
            and (col is None or p[1] == col)
            and cell["status"] in (COMPLETED, FAILED)
        ]
        if not again or self._refused([*again, *self.runnable]):
            return None
        for position in again:
            self._cells[position].update(
                status=PRICED, generation_id=None, credits=None, latency_s=None, items=[]
            )
        self.phase = "ready"
        return self.run()

    def _refused(self, positions: list[tuple[int, int]]) -> bool:
        """Whether the budget cannot cover these cells (then ``blocked_reason`` says so)."""
        self.blocked_reason = ""  # a refusal said again still reaches the view
        cost = _sum(self._cells[p]["estimate"] for p in positions) or 0.0
        if self.budget is None or cost <= self.budget.remaining + 1e-9:
            return False
        self.blocked_reason = (
            f"This run costs {_html.credits_text(cost)} credits but only "
            f"{_html.credits_text(self.budget.remaining)} of the budget are left; "
            "nothing was sent."
        )
        return True

    def retry(self, row: int, col: int) -> _tasks.Handle | None:
        """Submit a failed cell again (a new generation; a cell not failed is left alone)."""
        if self._cells[(row, col)]["status"] != FAILED:
            return None
        queued = self._queue([(row, col)])  # before yielding: a second click finds it busy
        self.task = _tasks.spawn(self._run_cells(queued), reporter=self._failed("Retry"))
        return self.task

    async def wait(self) -> Compare:
        """Await the pricing and, if a run started, its end (``await grid.wait()``)."""
        await self.ready
        while self.task is not None and not self.task.done():
            await self.task
        return self

    def join(self, timeout: float | None = None) -> Compare:
        """:meth:`wait` from a script (no running loop): block until priced and run."""
        with contextlib.suppress(RuntimeError):
            if asyncio.get_running_loop() is self._loop:
                raise TypeError("in a notebook, use `await grid.wait()` (this would block it)")
        future = asyncio.run_coroutine_threadsafe(self.wait(), self._loop)
        return future.result(timeout)

    def _key(self, row: int, col: int) -> str:
        """The cell's idempotency key, made once per submission and kept with the cell (and in
        a saved run), so submitting it again after a reopen is the same job, charged once."""
        cell = self._cells[(row, col)]
        if not cell.get("idempotency_key"):
            cell["idempotency_key"] = new_idempotency_key()
        key: str = cell["idempotency_key"]
        return key

    def _queue(self, positions: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Mark cells as waiting for a slot (at once, so the view and a second click see it)."""
        for position in positions:
            self._cells[position].update(
                status=QUEUED, error_code=None, error_message=None, idempotency_key=None
            )
        self._publish()
        return positions

    async def _run_cells(self, positions: list[tuple[int, int]]) -> None:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._pools:
            self._pools[loop_id] = on_loop(self.client).executor(self.concurrency)
        pool = self._pools[loop_id]
        await asyncio.gather(*(pool.submit(self._run_cell, *p) for p in positions))
        if not any(c["status"] in RUNNING for c in self._cells.values()):
            self.phase = "done" if not self.runnable else "ready"

    async def _run_cell(self, row: int, col: int) -> None:
        """One cell, in its turn of the grid's executor: submit, wait, keep its media."""
        body = self.plan.requests[(row, col)]
        kind = self.catalogs[body["model"]].type or "image"
        self._set(row, col, status=SUBMITTING)
        started = time.monotonic()
        try:
            client = on_loop(self.client)
            with self._budget():
                generation = await client.resource(kind).create(
                    **{**body, "idempotency_key": self._key(row, col)}
                )
            self.generations[(row, col)] = generation
            self._set(row, col, status=PENDING, generation_id=generation.id)
            generation = await noting_the_rate(
                client,
                client.generations.wait(generation),
                lambda note: self._set(row, col, rate_note=note),
            )
            self.generations[(row, col)] = generation
            items = await self._items(generation)
        except Exception as exc:
            self._set(row, col, status=FAILED, items=[], **_error_of(exc))
            return
        error = generation.error
        self._set(
            row,
            col,
            status=generation.status,
            generation_id=generation.id,
            credits=generation.credits_charged,
            latency_s=_latency(generation, time.monotonic() - started),
            error_code=error.code if error else None,
            error_message=error.message if error else None,
            items=items,
        )

    async def _items(self, generation: Generation[AsyncClient]) -> list[dict[str, Any]]:
        if not generation.completed:
            return []
        found = []
        for index, output in enumerate(generation.outputs):
            path = await fetched(output)
            item = item_at(path, output, f"{generation.model} #{index + 1}")
            self.register_media(item)
            found.append({**item.describe(), "credentials": await credentials(path)})
        return found

    @contextlib.contextmanager
    def _budget(self) -> Iterator[None]:
        if self.budget is None:
            yield
        else:
            with budget_scope(self.budget):
                yield

    # -- winners ---------------------------------------------------------------------------

    def choose(self, row: int, col: int | None) -> None:
        """Make cell (row, col) the winner of its row (None clears the row's choice)."""
        if not 0 <= row < len(self.plan.prompts):
            raise IndexError(f"no row {row}")
        chosen = dict(self.chosen)
        if col is None or chosen.get(str(row)) == col:
            chosen.pop(str(row), None)
        else:
            if not 0 <= col < len(self.plan.columns):
                raise IndexError(f"no column {col}")
            chosen[str(row)] = col
        self.chosen = chosen

    def rate(self, row: int, col: int, stars: int | None) -> None:
        """Rate finished cell (row, col) from 1 to 5 stars (None, or its rating again, clears)."""
        key = f"{row},{col}"
        if (row, col) not in self._cells:
            raise IndexError(f"no cell ({row}, {col})")
        ratings = dict(self.ratings)
        if stars is None or ratings.get(key) == stars:
            ratings.pop(key, None)
        elif not (isinstance(stars, int) and 1 <= stars <= 5):
            raise ValueError(f"a rating is 1 to 5 stars, not {stars!r}")
        elif self._cells[(row, col)]["status"] != COMPLETED:
            raise ValueError("only a finished cell can be rated")
        else:
            ratings[key] = stars
        self.ratings = ratings

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        action = content.get("action")
        with self.reporting(str(action).replace("_", " ").capitalize()):
            handler = _VIEW_ACTIONS.get(str(action))
            if handler is not None:
                handler(self, content)

    def _export_from_view(self, name: str) -> None:
        written = self.export_html(name.strip() or "compare-report.html")
        self.exported = f"Exported {name.strip() or written.name}"

    # -- results in Python -----------------------------------------------------------------

    @property
    def results(self) -> Any:
        """Every cell as a row: prompt, setting, generation id, status, credits, latency, error."""
        import pandas as pd

        return _frame(pd.DataFrame([self._record(r, c) for (r, c) in sorted(self._cells)]))

    @property
    def choices(self) -> Any:
        """The cells the user judged: each row's winner (``chosen``) and every rated cell
        (``rating``, 1-5), with its prompt, setting, cost and latency."""
        import pandas as pd

        judged = {(int(r), c) for r, c in self.chosen.items()}
        judged |= {_position(key) for key in self.ratings}
        picked = [self._record(r, c) for r, c in sorted(judged)]
        return _frame(pd.DataFrame(picked, columns=list(self._record(0, 0))))

    def _record(self, row: int, col: int) -> dict[str, Any]:
        cell = self._cells[(row, col)]
        column = self.plan.columns[col]
        body = self.plan.requests[(row, col)]
        return {
            "row": row,
            "prompt": self.plan.prompts[row],
            "column": column.label,
            "model": column.model,
            "mode": body.get("mode"),
            "settings": {k: v for k, v in column.fields.items() if k != "model"},
            "estimate": cell.get("estimate"),
            "generation_id": cell.get("generation_id"),
            "status": cell["status"],
            "credits": cell.get("credits"),
            "latency_s": cell.get("latency_s"),
            "error": cell.get("error_code"),
            "error_message": cell.get("error_message"),
            "chosen": self.chosen.get(str(row)) == col,
            "rating": self.ratings.get(f"{row},{col}"),
        }

    # -- saving ----------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        """Write the grid to a Parquet file (media stay in the client's cache); see :meth:`load`."""
        return _compare_store.save(self, path)

    def export_html(
        self, path: str | Path, *, max_embed_bytes: int = _html.MAX_EMBED_BYTES
    ) -> Path:
        """A self-contained HTML report of the grid to share: media embedded up to
        ``max_embed_bytes`` each (a larger one is named, never its place on this machine)."""
        path = Path(path).expanduser()
        path.write_text(report_html(self, max_embed_bytes), encoding="utf-8")
        return path

    @classmethod
    def load(
        cls, path: str | Path, client: Client | AsyncClient | None = None, **options: Any
    ) -> Compare:
        """A saved grid, back as it was: nothing is priced or run again, winners included."""
        records = _compare_store.read(path)
        prompts, settings = _compare_store.axes(records)
        grid = cls(prompts, settings, client=client, restore=records, **options)
        grid.chosen, grid.ratings = _compare_store.judgements(records)
        return grid

    # -- state for the view ----------------------------------------------------------------

    def _set(self, row: int, col: int, **changes: Any) -> None:
        self._cells[(row, col)].update(changes)
        self._publish()

    def _publish(self) -> None:
        self.cells = [dict(self._cells[p]) for p in sorted(self._cells)]

    def _failed(self, context: str) -> Any:
        return lambda exc: self.report(exc, context=context)

    # -- static fallback -------------------------------------------------------------------

    def snapshot_text(self) -> str:
        done = sum(c["status"] == COMPLETED for c in self._cells.values())
        total = "" if self.total is None else f", {_html.credits_text(self.total)} credits"
        rows, cols = len(self.plan.prompts), len(self.plan.columns)
        return f"Compare: {plural(rows, 'prompt')} x {plural(cols, 'setting')}{total}, {done} done"

    def snapshot_html(self) -> str:
        return grid_html(self)


def _catalogs(client: Client | AsyncClient) -> dict[str, Catalog]:
    """Every model's catalog entry, read once (synchronously: a bad model id fails here; an
    ``AsyncClient``'s blocking twin reads it)."""
    if isinstance(client, Client):
        models = client.models.list()
    else:
        with client.to_sync() as blocking:
            models = blocking.models.list()
    return {Catalog(m).id: Catalog(m) for m in models}


def _error_of(exc: BaseException) -> dict[str, Any]:
    return {"error_code": getattr(exc, "code", None) or type(exc).__name__,
            "error_message": _describe(exc)}  # fmt: skip


def _latency(generation: Generation[AsyncClient], watched: float) -> float:
    """Seconds from submit to the end, by the service's clock when it says (else ours)."""
    created, completed = generation.created_at, generation.completed_at
    if isinstance(created, datetime) and isinstance(completed, datetime):
        return round((completed - created).total_seconds(), 3)
    return round(watched, 3)


def _sum(values: Iterable[float | None]) -> float | None:
    """The total to the cent; None while any figure is unknown."""
    found = list(values)
    known = [v for v in found if v is not None]
    return round(sum(known), 2) if len(known) == len(found) else None


def _frame(frame: Any) -> Any:
    """Ratings are whole stars, or missing (pandas' nullable integers)."""
    frame["rating"] = frame["rating"].astype("Int64")
    return frame


def _position(key: str) -> tuple[int, int]:
    row, col = key.split(",")
    return int(row), int(col)


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


#: What each button of the view asks for (content is the view's message).
_VIEW_ACTIONS: dict[str, Any] = {
    "run": lambda grid, content: grid.run(),
    "retry": lambda grid, content: grid.retry(int(content["row"]), int(content["col"])),
    "choose": lambda grid, content: grid.choose(
        int(content["row"]), _optional_int(content.get("col"))
    ),
    "rate": lambda grid, content: grid.rate(
        int(content["row"]), int(content["col"]), _optional_int(content.get("stars"))
    ),
    "add_column": lambda grid, content: grid.add_column(_setting(str(content["setting"]))),
    "rerun": lambda grid, content: grid.rerun(
        row=_optional_int(content.get("row")), col=_optional_int(content.get("col"))
    ),
    "export": lambda grid, content: grid._export_from_view(str(content.get("path") or "")),
}


def _setting(text: str) -> Any:
    """A setting typed in the view: a model id, or a JSON object of fields."""
    text = text.strip()
    if text.startswith("{"):
        return json.loads(text)
    if not text:
        raise ValueError("name a model (or give a JSON object of fields) to add a column")
    return text


def columns_given(settings: Any, models: Any) -> Any:
    """The grid's columns, whichever name they came under: ``models=`` is what people write
    first (a column is usually just a model id), ``settings=`` says a column may also carry
    fields; they are one argument, so exactly one of them is given."""
    if settings is not None and models is not None:
        raise TypeError(
            "compare() takes the columns once: models=[...] or settings=[...], not both"
        )
    if settings is None and models is None:
        raise TypeError(
            "compare() needs its columns: models=['pixel-1', {'model': 'pixel-pro', ...}]"
        )
    return models if settings is None else settings


def compare(
    rows: Any,
    settings: Any = None,
    client: Client | AsyncClient | None = None,
    *,
    models: Any = None,
    **options: Any,
) -> Compare:
    """``mediagen.compare(prompts, models=["pixel-1", "pixel-pro"])``: the priced grid (see
    module); the columns may also come second, or as ``settings=``."""
    return Compare(rows, settings, models=models, client=client, **options)

"""What the Dask and Spark adapters share: the plan made on the driver, the run sent to the
workers, and what each worker does with its part of the table.

The driver reads only the columns the fields name, plans and prices the whole table with the
service's estimates and checks the budget, all before any generation task exists. What travels
to the workers is a :class:`ClusterRun`: the plan's picklable spec (model and fields, no
credentials), the run id, the output place and the concurrency. A worker rebuilds its rows'
requests from that spec and derives each row's key from the run id, its label and its request
(the same on every machine, so a task retried after its worker died sends the same keys and
the service charges nothing again), then runs them with ``run_rows`` through a ``Client()``
made from the worker's own environment. The API key is never an argument of a task: it is not
in a task graph, a pickled function, a log line or a result column.
"""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from mediagen.datasets._schema import RESULT_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from mediagen.client import Client
    from mediagen.client._requests import KeyGate
    from mediagen.datasets._fields import PlanSpec
    from mediagen.datasets._plan import Plan

#: how a worker's gate joins the cluster's pace for a partition: entered before its rows run,
#: left after (the Dask adapter reads and publishes the pace; the Spark adapter takes a share)
Coordinate = Callable[["KeyGate"], AbstractContextManager[None]]


@dataclass(frozen=True)
class ClusterPace:
    """The key's pace as the driver knew it when the run was planned, for the machines of the
    cluster: requests per second (None: nothing known yet), when, and the group of processes
    that share the driver's pace file (its machine's). Named by the key's fingerprint, never
    by the key."""

    name: str
    pace: float | None
    group: str
    at: float
    #: the driver was told the pace (``rate_limit=``): the machines hold their shares of it,
    #: and learn nothing together
    told: bool = False

    #: the whole cluster's pace when nothing is known of the limit (requests per second): the
    #: machines start there and grow while the pace holds them back, as TCP's slow start does.
    #: Unpaced, every machine's first requests go at once (machines x concurrency), far past
    #: a small limit's burst, and each meets the limit before any has learned it
    START: ClassVar[float] = 4.0

    def adopt(self, gate: KeyGate, pace: float | None, at: float, group: str, share: float) -> None:
        """Hold ``gate`` to ``share`` of ``pace`` (the cluster's, published at ``at`` by a
        process of ``group``) unless it was adopted already, or it is this machine's own and
        the machine has learned a pace: this machine's processes learn together through their
        pace file, and an adoption each time a partition starts would undo what they learned
        since. A pace the driver was told (``rate_limit=``) is held fixed instead: the
        machine's share of it, learning nothing, since growing past a limit the user knows
        only earns 429s. Nothing known anywhere (no pace published, none learned here), the
        machine starts at its share of ``START``, raised as more of its workers join (a share
        counts only the workers named so far: the first of four starts at a quarter)."""
        if self.told and self.pace:
            _HELD[gate] = gate.rate = self.pace * share
            return
        if gate.rate is not None and gate.rate == _HELD.get(gate):
            gate.rate = None  # an earlier run's told pace: this run learns
        if not pace:  # nothing known anywhere: start modest, at the share known by now
            gate.start_at(self.START * share)
            return
        if at <= _ADOPTED.get(self.name, 0.0):
            return
        if group == _machine_group() and gate.learned is not None:
            return
        _ADOPTED[self.name] = at
        gate.adopt(pace * share)

    def mark(self, at: float) -> None:
        """This process published the pace at ``at``: not one to adopt back."""
        _ADOPTED[self.name] = max(at, _ADOPTED.get(self.name, 0.0))


#: per pace name, the newest published pace this process adopted or published
_ADOPTED: dict[str, float] = {}
#: the told pace a run held each gate of this process to (a later run that was not told
#: learns again rather than keep it)
_HELD: weakref.WeakKeyDictionary[KeyGate, float] = weakref.WeakKeyDictionary()


def _machine_group() -> str:
    from mediagen.local._pace import machine_group

    return machine_group()


def driver_pace(client: Client) -> ClusterPace:
    """The driver's :class:`ClusterPace` of its client's key: the pace its gate holds to (told
    or learned, by this run or an earlier one on this machine)."""
    from mediagen.local._pace import pace_file_name

    config = client._config
    name = "mediagen-" + pace_file_name(config.base_url, config.key_fingerprint)
    gate = client._gate
    return ClusterPace(name, gate.pace, _machine_group(), time.time(), gate.rate is not None)


def share_of(pace: ClusterPace | None, share: float) -> Coordinate:
    """A partition's gate takes ``share`` of the driver's pace when it runs on a machine other
    than the driver's (Spark: the executor's task slots over the tasks that run at once)."""

    @contextlib.contextmanager
    def coordinate(gate: KeyGate) -> Iterator[None]:
        if pace is not None:
            pace.adopt(gate, pace.pace, pace.at, pace.group, share)
        yield

    return coordinate


@dataclass(frozen=True)
class ClusterRun:
    """Everything a worker needs to run its rows of one plan (picklable; no API key)."""

    spec: PlanSpec
    run_id: str
    output_dir: str | None
    concurrency: int
    #: the labels of rows the plan found invalid and skips (``on_invalid="skip"``): problem
    skipped: Mapping[Hashable, str] = field(default_factory=dict)
    #: the key's pace on the driver, which the workers' gates start from
    pace: ClusterPace | None = None

    def run(
        self, part: pd.DataFrame, coordinate: Coordinate | None = None, place: str | None = None
    ) -> pd.DataFrame:
        """Run one partition (its index: the row labels) on a worker: one result line per
        row, same index, exactly ``RESULT_COLUMNS``; a skipped row is sent nowhere.
        ``coordinate``: how the worker's gate joins the cluster's pace meanwhile. With an
        ``output_dir``, the partition's part of the run manifest is written there too (named by
        its rows, so another attempt replaces it), ``place`` ordering it among the others."""
        out = self._results(part, coordinate)
        if self.output_dir is not None and place is not None:
            from mediagen.datasets._manifest_parts import write_part

            write_part(self.output_dir, out, self.run_id, place)
        return out

    def _results(self, part: pd.DataFrame, coordinate: Coordinate | None) -> pd.DataFrame:
        import pandas as pd

        from mediagen.client import Client
        from mediagen.datasets._rows import run_rows

        skip = [label in self.skipped for label in part.index]
        sent = part[[not s for s in skip]] if any(skip) else part
        rows = self.spec.rows(sent, self.run_id)
        with Client() as client:
            joined = coordinate(client._gate) if coordinate else contextlib.nullcontext()
            with joined:
                out = run_rows(
                    client, rows, output_dir=self.output_dir, concurrency=self.concurrency
                )
        if not any(skip):
            return out.astype(RESULT_COLUMNS)
        labels = part.index[skip]
        extra = pd.DataFrame.from_records(
            [skipped_record(self.skipped[label]) for label in labels], columns=list(RESULT_COLUMNS)
        ).set_axis(labels)
        return pd.concat([out.astype(RESULT_COLUMNS), extra.astype(RESULT_COLUMNS)]).loc[part.index]


def skipped_record(problem: str) -> dict[str, Any]:
    """The result line of a row the plan skipped as invalid (as ``Plan.run`` writes it)."""
    record: dict[str, Any] = dict.fromkeys(RESULT_COLUMNS)
    record.update(status="skipped", credits=0.0, error_code="invalid_request", error=problem)
    return record


def named_columns(columns: list[str], model: str, fields: dict[str, Any]) -> list[str]:
    """The table's columns the fields read (templates' placeholders, ``col`` names): all the
    driver has to fetch to plan and price the table."""
    from mediagen.datasets._fields import PlanSpec

    wanted = set(PlanSpec({"model": model, **fields}).columns())
    return [name for name in columns if name in wanted]


@dataclass(frozen=True)
class Asked:
    """What a cluster's ``generate`` was asked, for the driver to plan: the model and the
    fields of each row, the budget to check, the run the rows belong to, where the outputs go
    and how many run at once per task."""

    model: str
    budget: float | None
    run_id: str | None
    output_dir: str | None
    concurrency: int
    client: Client | None
    fields: dict[str, Any]
    on_invalid: Literal["raise", "skip"] = "raise"


def plan_on_driver(
    frame: pd.DataFrame, asked: Asked, labelled: bool = True
) -> tuple[Plan, ClusterRun]:
    """Plan and price ``frame`` (the table's named columns, on the driver) and check the total
    against the budget asked for and any active budget or spend limit: over it, it raises
    :class:`~mediagen.BudgetExceededError` before any task exists. With an output place, the
    run's plan goes there (its row count, and ``frame``'s labels when they are the ones the
    workers will use: ``labelled``), so the gathered manifest can name rows never run."""
    from mediagen.client import _submit
    from mediagen.client._budget import refuse_over
    from mediagen.datasets._plan import plan
    from mediagen.datasets._rows import check_output_dir

    made = plan(frame, asked.client, on_invalid=asked.on_invalid, run_id=asked.run_id,
                model=asked.model, **asked.fields)  # fmt: skip
    refuse_over(made.total, _submit._budgets(made.client), asked.budget, "budget")  # as run()
    output_dir = None if asked.output_dir is None else str(asked.output_dir)
    check_output_dir(output_dir)
    skipped: dict[Hashable, str] = {}
    if "valid" in made.requests.columns:
        invalid = made.requests[~made.requests["valid"].astype(bool)]
        skipped = {label: str(problem) for label, problem in invalid["problem"].items()}
    if output_dir is not None:
        from mediagen.datasets._manifest_parts import write_plan

        write_plan(output_dir, made.run_id, len(frame), frame.index if labelled else None)
    run = ClusterRun(
        spec=made.spec,
        run_id=made.run_id,
        output_dir=output_dir,
        concurrency=asked.concurrency,
        skipped=skipped,
        pace=driver_pace(made.client),
    )
    return made, run

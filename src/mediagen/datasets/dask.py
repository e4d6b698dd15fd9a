"""A table on a Dask cluster: ``mediagen.dask.generate(ddf, model=..., prompt="{caption}")``.

The same fields and result columns as ``df.mediagen.generate``. On the driver, at call time:
the columns the fields name are read, every row is checked and priced with the service's
estimates and the total is checked against ``budget=`` and any active budget or spend limit;
over it, :class:`~mediagen.BudgetExceededError` and no generation task exists. What comes back
is a lazy dask DataFrame (the ``ddf``'s index, the result columns), as every Dask operation
returns: ``.compute()``, ``.to_parquet(...)`` or ``.persist()`` runs it on the workers, so a
large table's results can go straight to storage without passing through the driver. Computing
it again is free: each row's idempotency key is derived from the run id, its label and its
request, so the service answers a key it has seen with the generation it already made — after a
worker died and the scheduler ran its partition again, or when the result is computed twice.

With ``output_dir=``, each partition writes its share of the run manifest beside its outputs
(``run-manifest.parts/``, named by the run and the partition's rows, so a partition run again
replaces its part); ``mediagen.dask.write_run_manifest(output_dir)`` after the result is
computed or written gathers them into ``run-manifest.json``, as a local table run writes it.

Each worker builds its own ``Client()`` from its environment: give the cluster
``MEDIAGEN_API_KEY`` (``LocalCluster(env={...})``, the worker pods' environment, or
``distributed.worker.env`` in Dask's config). The key is never put in the task graph.

One rate limit for the whole cluster. The service limits each key, not each worker: sixteen
workers pacing themselves alone would send sixteen times the limit and each meet its own 429s.
The processes of one machine already share the key's pace through a file (every worker of a
``LocalCluster`` among them: see :class:`~mediagen.client._requests.KeyGate`). Between machines
the pace goes through a ``distributed.Variable`` named by the key's fingerprint (and the
service URL's hash): the driver puts there the pace it knows when the run is planned (told with
``rate_limit=`` or learned, by now or by an earlier run); each worker, as a partition starts,
holds its machine to that pace times the machine's share of the cluster's workers (counted in
the scheduler's metadata, each worker under its machine's group); as the partition ends it puts
back what its machine learned meanwhile, scaled to the whole cluster, for the other machines'
next partitions and the next run. So the machines' shares add up to the cluster's pace. A pace
the driver was told is held fixed (each machine its share of it, nothing learned past it).
Nothing known, the machines start modest and grow while the pace binds (``ClusterPace.START``,
a slow start; a machine's start rises as its workers join). Not told the limit, the machines
learn it as one: a 429 that cuts a machine's pace is told on distributed's events (a topic
named like the Variable), every machine cuts with it, and each holds to its share of what the
whole cluster had accepted (:class:`CutTogether`). Learning alone, one machine's growth was the
other's 429 while its pace settled, read there as a fallen limit, until the paces sank to the
floor.

Why not a token per request from a scheduler-held ``Semaphore`` or ``Queue``: a round trip to
the scheduler for every request, on every worker, and a driver thread to refill the tokens
for as long as the lazy result may be computed, for what a share adjusted once per partition
gives too. A worker that dies holds nothing of the Variable's; what it had reserved of its
machine's pace comes back within the gate's lease.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from mediagen._extras import require
from mediagen.datasets._cluster import (
    Asked,
    ClusterPace,
    ClusterRun,
    named_columns,
    plan_on_driver,
)
from mediagen.datasets._manifest_parts import write_run_manifest as write_run_manifest
from mediagen.datasets._schema import RESULT_COLUMNS

require("dask", "mediagen.dask")

if TYPE_CHECKING:
    import dask.dataframe as dd
    import distributed
    import pandas as pd

    from mediagen.client import Client
    from mediagen.client._requests import KeyGate
    from mediagen.datasets._plan import Plan

#: the scheduler metadata under which each worker names its machine's group, per pace
METADATA = "mediagen-pace"


def generate(
    ddf: dd.DataFrame,
    *,
    model: str,
    budget: float | None = None,
    run_id: str | None = None,
    output_dir: str | None = None,
    client: Client | None = None,
    concurrency: int = 8,
    on_invalid: Literal["raise", "skip"] = "raise",
    **fields: Any,
) -> dd.DataFrame:
    """Plan and price ``ddf`` on the driver (refused whole when over budget), then a lazy dask
    DataFrame of results, one partition per partition of ``ddf``. ``client`` prices on the
    driver (default: ``Client()`` from the environment); the workers use their own.
    ``output_dir``: any fsspec URL (``s3://...``, ``memory://``) or a directory every worker
    can reach. A table with invalid rows is refused whole, naming them;
    ``on_invalid="skip"`` runs the rest and marks those ``skipped``. Each row's label is its
    index value, so the index must not repeat (``dd.read_csv`` numbers each partition from 0:
    ``ddf.set_index("id")`` first)."""
    asked = Asked(model, budget, run_id, output_dir, concurrency, client, fields, on_invalid)
    run, _ = prepare(ddf, asked)
    publish_pace(run.pace)
    out: dd.DataFrame = ddf.map_partitions(
        _run_partition, run, meta=_meta(ddf), align_dataframes=False
    )
    return out


def prepare(ddf: dd.DataFrame, asked: Asked) -> tuple[ClusterRun, Plan]:
    """The driver's part: read the named columns, plan, price and check the budget."""
    from mediagen.datasets._fields import PlanError

    named = named_columns(list(ddf.columns), asked.model, asked.fields)
    frame = ddf[named].compute() if named else ddf.map_partitions(_no_columns).compute()
    if not frame.index.is_unique:
        repeated = list(dict.fromkeys(frame.index[frame.index.duplicated()]))[:5]
        raise PlanError(
            "each row needs a label of its own: its key is made from it, and this dask "
            "DataFrame's index repeats (dd.read_csv numbers each partition from 0): "
            'ddf.set_index("id") on a column that tells rows apart',
            [(label, "index", "this label is used by more than one row") for label in repeated],
        )
    made, run = plan_on_driver(frame, asked)
    return run, made


def _no_columns(part: pd.DataFrame) -> pd.DataFrame:
    return part.iloc[:, :0]


def _run_partition(
    part: pd.DataFrame, run: ClusterRun, partition_info: dict[str, Any] | None = None
) -> pd.DataFrame:
    """One partition, on a worker. Its number (``partition_info``, which Dask passes to a
    function that asks for it) places its part of the run manifest among the others."""
    place = None if partition_info is None else f"{int(partition_info['number']):06d}"
    pace = run.pace
    if pace is None:
        return run.run(part, place=place)

    def coordinate(gate: KeyGate) -> contextlib.AbstractContextManager[None]:
        return cluster_pace(pace, gate)

    return run.run(part, coordinate, place)


def _distributed_client() -> distributed.Client | None:
    """The ``distributed`` client of this process (a worker's, or the driver's default), or
    None when the graph runs on Dask's local schedulers (one machine: the pace file is enough)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


def publish_pace(pace: ClusterPace | None) -> None:
    """On the driver: the key's pace, for the workers' first partitions."""
    client = _distributed_client()
    if pace is None or client is None:
        return
    from distributed import Variable

    Variable(pace.name, client=client).set({"pace": pace.pace, "at": pace.at, "group": pace.group})


def machine_share(client: distributed.Client, pace: ClusterPace, group: str) -> float:
    """This machine's share of the cluster's workers: its workers named under ``group`` in
    the scheduler's metadata (this one now among them) over every worker the scheduler has.
    One of this machine's workers not named yet makes the share smaller, never larger."""
    from distributed import get_worker

    client.set_metadata([METADATA, pace.name, get_worker().address], group)
    named = client.get_metadata([METADATA, pace.name], default={}) or {}
    workers = set(client.scheduler_info(n_workers=-1)["workers"])
    mine = sum(1 for address, found in named.items() if found == group and address in workers)
    return max(1, mine) / max(1, len(workers))


@contextlib.contextmanager
def cluster_pace(pace: ClusterPace, gate: KeyGate) -> Iterator[None]:
    """On a worker, around a partition: its machine takes its share of the pace the Variable
    holds, and puts back what it learned (see the module's docstring)."""
    from mediagen.local._pace import machine_group

    client = _distributed_client()
    if client is None:
        yield
        return
    from distributed import Variable

    group, variable = machine_group(), Variable(pace.name, client=client)
    share = machine_share(client, pace, group)
    if not pace.told:
        cut_together(client, pace, gate, group, share)
    try:
        found = variable.get(timeout=5)
    except TimeoutError:
        found = None
    if isinstance(found, dict):
        pace.adopt(gate, found.get("pace"), float(found.get("at") or 0.0), found["group"], share)
    try:
        yield
    finally:
        learned = None if gate.rate else gate.learned
        if learned:
            at = time.time()
            pace.mark(at)
            variable.set({"pace": learned / share, "at": at, "group": group})


class CutTogether:
    """How a worker process's gate learns the key's limit with the other machines: as one
    learner would, by the whole cluster's accepted rate. Each cut a 429 makes on a machine is
    told, on a topic of distributed's events, with the rate the service had accepted from
    that machine; a machine that hears of a cut cuts too (once per cut: see
    :meth:`~mediagen.client._requests.KeyGate.cut_elsewhere`) and tells its own rate. Each
    then holds to its share of the sum, times the factor of the cut: its share among the
    machines that were sending (an idle one, or one just starting, accepted nothing and takes
    nothing of the sum, nor counts in it). Cut each by its own rate alone, a machine that
    happened to start slower stays slower at every cut, its rows lag the others' and a lull
    there throws its pace to the floor."""

    #: cuts told this close together (seconds, wall clock) are the same cut
    SAME = 2.0

    def __init__(self, gate: KeyGate, group: str, topic: str, worker: Any) -> None:
        self.gate, self.group, self.topic, self.worker = gate, group, topic, worker
        #: this machine's share of the cluster's workers (updated as each partition starts)
        self.share = 1.0
        self.lock = threading.Lock()
        #: this process's last cut: the rate accepted then, its factor, when (wall clock)
        self.mine: tuple[float, float, float] | None = None
        #: per other machine, at its last cut: the rate it had accepted, its share, when
        self.heard_of: dict[str, tuple[float, float, float]] = {}

    def tell(self, accepted: float, factor: float) -> None:
        """The gate cut: tell the cluster (from a request's thread, so through the worker's
        loop, which never blocks it)."""
        at = time.time()
        with self.lock:
            self.mine = (accepted, factor, at)
            self._settle()
        message = {"group": self.group, "accepted": accepted, "share": self.share, "at": at}
        self.worker.loop.add_callback(self.worker.log_event, self.topic, message)

    def heard(self, event: tuple[float, Any]) -> None:
        """Another machine told of a cut (on the worker's loop)."""
        found = event[1]
        if not isinstance(found, dict) or found.get("group") in (None, self.group):
            return
        try:
            told = float(found["accepted"]), float(found["share"]), float(found["at"])
        except (KeyError, TypeError, ValueError):
            return
        with self.lock:
            self.heard_of[str(found["group"])] = told
        self.gate.cut_elsewhere()  # tells this machine's own rate when it cuts
        with self.lock:
            self._settle()

    def _settle(self) -> None:
        """Hold to this machine's share of the cut's whole accepted rate among the machines
        that were sending (under the lock)."""
        if self.mine is None or self.mine[0] <= 0:
            return  # not sending here: its own cut stands until it has a rate to tell
        accepted, factor, at = self.mine
        others = [
            (rate, share)
            for rate, share, when in self.heard_of.values()
            if rate > 0 and abs(when - at) <= self.SAME
        ]
        if others:
            whole = accepted + sum(rate for rate, _ in others)
            shares = self.share + sum(share for _, share in others)
            self.gate.adopt(factor * whole * self.share / shares)


#: per pace name, this process's part in the cluster's cuts
_CUTTING: dict[str, CutTogether] = {}


def cut_together(
    client: distributed.Client, pace: ClusterPace, gate: KeyGate, group: str, share: float
) -> None:
    """On a worker: its gate cuts with the other machines' (:class:`CutTogether`), listening
    from the first partition of the process on."""
    cutting = _CUTTING.get(pace.name)
    if cutting is None:
        from distributed import get_worker

        topic = f"{pace.name}-cut"
        cutting = _CUTTING[pace.name] = CutTogether(gate, group, topic, get_worker())
        client.subscribe_topic(topic, cutting.heard)
        gate.cut_listeners.append(cutting.tell)
    cutting.share = share


def _meta(ddf: dd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    index = ddf._meta.index[:0]
    return pd.DataFrame(
        {name: pd.Series([], dtype=dtype, index=index) for name, dtype in RESULT_COLUMNS.items()},
        index=index,
    )

"""A cluster run's manifest, written in parts: one per partition, gathered into one.

A table run on Dask or Spark has no single process that sees every row: each partition runs on
a worker, and the driver gets the results only if the user collects them (``.to_parquet`` on
the workers never passes them through it). So each partition that saves its outputs to an
``output_dir`` also writes its share of the run manifest, ``run-manifest.parts/<name>.json``:
its rows as a local run lists them (outputs, the SHA-256 of each sidecar, the charge), the run
id and the partition's place. The name is derived from the run id and the partition's rows,
never from the attempt, so a task retried after its worker died, or a result computed twice,
rewrites its own part rather than adding one. Each part is written under a name of its own and
then moved in place: a reader never sees half a part, and two attempts of one task never write
into one file.

:func:`write_run_manifest` gathers the parts of one run into ``run-manifest.json``, the same
schema as a local run's, so the same audit reads both. A row found in more than one part (the
same run computed again with other partitions) is listed once, as its newest part says.

What no part can say is a partition that never ran (only ``.head()`` or one partition
computed, a write that stopped midway): so the driver, as it plans the run, writes the run's
plan beside the parts (``<run>-plan.json``: how many rows, and their labels when it knows them:
a Dask index, a Spark ``index=`` column). The gathered manifest then says how many rows were
planned and which never ran (``rows_planned``, ``rows_missing``), and the audit
(``mediagen verify``) calls such a run incomplete.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any

from mediagen._version import __version__
from mediagen.datasets._run_manifest import RUN_MANIFEST, run_manifest, write_manifest

if TYPE_CHECKING:
    import pandas as pd

#: the folder of ``output_dir`` that holds the parts of cluster runs
PARTS = "run-manifest.parts"


def part_name(run_id: str, labels: Iterable[Hashable]) -> str:
    """A part's file name: digests of the run id (runs sharing an ``output_dir`` keep their
    parts apart, whatever characters their ids hold) and of the partition's row labels. Taken
    from what the partition holds, not from where a graph put it, so the same rows computed
    again (a retried task, the result computed twice, ``.partitions[k]`` alone) replace their
    own part and no other."""
    rows = hashlib.sha256(json.dumps([str(label) for label in labels]).encode()).hexdigest()
    return f"{_run_digest(run_id)}-{rows[:16]}.json"


def write_part(output_dir: str, results: pd.DataFrame, run_id: str, place: str) -> str:
    """One partition's rows of the run manifest (``results``: its result lines, indexed by
    its labels), at ``run-manifest.parts/`` in ``output_dir`` (a new attempt of the partition
    replaces it); where it was written. ``place`` orders the parts in the gathered manifest."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(output_dir)
    folder = root.rstrip("/") + "/" + PARTS
    fs.makedirs(folder, exist_ok=True)
    name = part_name(run_id, results.index)
    part = run_manifest(results, fs, run_id)
    part.update(part=name, place=place, written_at=time.time())
    return write_manifest(fs, folder, part, name)


def _run_digest(run_id: str) -> str:
    return hashlib.sha256(run_id.encode()).hexdigest()[:16]


def write_plan(output_dir: str, run_id: str, rows: int, labels: Iterable[Hashable] | None) -> str:
    """On the driver, as the run is planned: the run's ``rows`` and, when the driver knows
    them, their ``labels``, for the gathered manifest to name the rows that never ran."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(output_dir)
    folder = root.rstrip("/") + "/" + PARTS
    fs.makedirs(folder, exist_ok=True)
    plan = {
        "run_id": run_id,
        "plan": True,
        "rows_planned": rows,
        "labels": None if labels is None else [str(label) for label in labels],
        "written_at": time.time(),
    }
    return write_manifest(fs, folder, plan, f"{_run_digest(run_id)}-plan.json")


def read_parts(output_dir: str) -> list[dict[str, Any]]:
    """Every part under ``output_dir``, whatever its run (none: an empty list)."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(output_dir)
    parts = []
    for path in sorted(fs.glob(root.rstrip("/") + "/" + PARTS + "/*.json")):
        with fs.open(path, "r") as handle:
            parts.append(json.load(handle))
    return parts


def _newest_run(parts: list[dict[str, Any]]) -> str:
    """The run whose part was written last: the run last computed, as a local run's manifest
    is the last run's."""
    return str(max(_rows_parts(parts), key=lambda part: part.get("written_at") or 0.0)["run_id"])


def _rows_parts(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parts partitions wrote (not the driver's plans)."""
    return [part for part in parts if not part.get("plan")]


def combine(parts: list[dict[str, Any]], run_id: str) -> dict[str, Any]:
    """One run's manifest from its parts: each row once (its newest part's entry), in the
    order of the partitions' places and of the rows within each part (the table's order once
    the whole result has been computed)."""
    latest: dict[Any, tuple[tuple[str, str, int], dict[str, Any]]] = {}
    mine = [part for part in _rows_parts(parts) if part.get("run_id") == run_id]
    for part in sorted(mine, key=lambda part: part.get("written_at") or 0.0):
        for n, row in enumerate(part.get("rows") or []):
            latest[row.get("row")] = ((str(part.get("place")), str(part.get("part")), n), row)
    rows = [row for _, row in sorted(latest.values(), key=lambda found: found[0])]
    charged = [row["credits_charged"] for row in rows if row.get("credits_charged") is not None]
    manifest: dict[str, Any] = {
        "run_id": run_id,
        "mediagen_version": __version__,
        "credits_charged": float(sum(charged)),
        "rows": rows,
    }
    plans = [part for part in parts if part.get("plan") and part.get("run_id") == run_id]
    if plans:
        plan = max(plans, key=lambda part: part.get("written_at") or 0.0)
        manifest["rows_planned"] = int(plan.get("rows_planned") or 0)
        if plan.get("labels") is not None:
            ran = {row.get("row") for row in rows}
            manifest["rows_missing"] = [label for label in plan["labels"] if label not in ran]
    return manifest


def write_run_manifest(output_dir: str | os.PathLike[str], run_id: str | None = None) -> str:
    """Gather the parts a cluster run's partitions wrote into ``output_dir/run-manifest.json``
    (the schema of a local run's: every row once, its outputs, each sidecar's SHA-256 and its
    charge) and return where it was written. Call it once the result has been computed or
    written (``.compute()``, ``.to_parquet(...)``, ``.write.parquet(...)``), on the driver or
    anywhere that reaches ``output_dir``; calling it again rewrites the manifest whole. Rows
    the run planned that no partition ran are named in it (``rows_missing``, or counted by
    ``rows_planned`` when the driver had no labels), and ``mediagen verify`` fails it.
    ``run_id``: the run to gather (default: the run whose part was written last). Raises
    FileNotFoundError when ``output_dir`` holds no part of that run."""
    import fsspec

    target = os.fspath(output_dir)
    parts = read_parts(target)
    rows_parts = _rows_parts(parts)
    chosen = run_id if run_id is not None else (_newest_run(parts) if rows_parts else None)
    if chosen is None or not any(part.get("run_id") == chosen for part in rows_parts):
        which = "" if run_id is None else f" of run {run_id!r}"
        raise FileNotFoundError(
            f"no run-manifest part{which} in {target}/{PARTS}: compute the result of "
            "mediagen.dask.generate or mediagen.spark.generate with output_dir= first"
        )
    fs, root = fsspec.core.url_to_fs(target)
    return write_manifest(fs, root, combine(parts, chosen), RUN_MANIFEST)

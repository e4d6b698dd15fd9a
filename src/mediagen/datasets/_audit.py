"""The audit of a run manifest: does the folder still hold what the run wrote?

``run-manifest.json`` (a local table run's, or one gathered from a cluster run's parts) names
each row's outputs and the SHA-256 of each output's sidecar. The sidecar names the output's own
SHA-256, and ``mediagen verify`` checks that; this checks the layer above it, so together they
show an output added, dropped or swapped: every listed sidecar is there with the hash the run
recorded, no row is listed twice, the charges add up to the total, and no output in the
manifest's folder is left out of it. It reads the files only (no service, no pandas), so an
auditor holding the folder needs nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from mediagen.datasets._run_manifest import SIDECAR_SUFFIX


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _located(folder: Path, place: str) -> Path:
    """Where a listed output is: at its recorded path, else in the manifest's folder under its
    name (the folder copied or downloaded elsewhere, an ``s3://`` run audited from a copy)."""
    recorded = Path(place)
    if "://" not in place and recorded.exists():
        return recorded.resolve()
    return (folder / place.rstrip("/").rsplit("/", 1)[-1]).resolve()


def _outputs_problems(folder: Path, rows: list[dict[str, Any]]) -> list[str]:
    problems = []
    for row in rows:
        for saved in row.get("outputs") or []:
            place = str(saved.get("output"))
            output = _located(folder, place)
            found = _digest(output.with_name(output.name + SIDECAR_SUFFIX))
            if found is None:
                problems.append(f"{place}: listed for row {row.get('row')}, its sidecar is gone")
            elif found != saved.get("manifest_sha256"):
                problems.append(f"{place}: its sidecar is not the one the run recorded")
    return problems


def _unlisted(folder: Path, rows: list[dict[str, Any]]) -> list[str]:
    """Outputs with a sidecar in ``folder`` (the run's ``output_dir``) that no row lists."""
    listed = {
        _located(folder, str(saved.get("output")))
        for row in rows
        for saved in row.get("outputs") or []
    }
    outputs = [
        sidecar.with_name(sidecar.name[: -len(SIDECAR_SUFFIX)])
        for sidecar in sorted(folder.glob("*" + SIDECAR_SUFFIX))
    ]
    return [
        f"{output}: in the folder, not in the run manifest"
        for output in outputs
        if output.resolve() not in listed
    ]


def check_run_manifest(path: str | os.PathLike[str]) -> list[str]:
    """What is wrong with the run manifest at ``path`` and the folder it sits in, one line per
    problem (none: the folder holds exactly the outputs the run recorded, each sidecar as it was
    written). Local files; raises FileNotFoundError when ``path`` is no file."""
    manifest_path = Path(path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    rows: list[dict[str, Any]] = list(manifest.get("rows") or [])
    problems = [
        f"row {label}: listed {count} times"
        for label, count in Counter(str(row.get("row")) for row in rows).items()
        if count > 1
    ]
    charged = sum(float(row.get("credits_charged") or 0.0) for row in rows)
    if abs(charged - float(manifest.get("credits_charged") or 0.0)) > 1e-9:
        problems.append(f"the rows' charges add up to {charged}, not to the total recorded")
    folder = manifest_path.parent
    return (
        problems + _never_ran(manifest, rows) + _outputs_problems(folder, rows)
        + _unlisted(folder, rows)
    )  # fmt: skip


def _never_ran(manifest: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    """A cluster run's rows that were planned and that no partition ran (its manifest says
    what the driver planned: see :mod:`mediagen.datasets._manifest_parts`)."""
    missing = manifest.get("rows_missing")
    if missing:
        shown = ", ".join(str(label) for label in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        return [
            f"{len(missing)} of {manifest.get('rows_planned')} planned rows never ran "
            f"({shown}{more}): compute the whole result, then gather the manifest again"
        ]
    planned = manifest.get("rows_planned")
    if missing is None and planned is not None and len(rows) < int(planned):
        return [
            f"{int(planned) - len(rows)} of {planned} planned rows never ran: compute the whole "
            "result, then gather the manifest again"
        ]
    return []


def summary_line(path: str | os.PathLike[str]) -> tuple[str, bool]:
    """One line for ``mediagen verify``: the manifest's rows, outputs and credits and
    ``complete``, or its problems, one per line; and whether it is complete."""
    problems = check_run_manifest(path)
    if problems:
        return "\n".join(f"{path}: {problem}" for problem in problems), False
    manifest = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = manifest.get("rows") or []
    outputs = sum(len(row.get("outputs") or []) for row in rows)
    credits = float(manifest.get("credits_charged") or 0.0)
    return f"{path}: {len(rows)} rows, {outputs} outputs, {credits:g} credits, complete", True

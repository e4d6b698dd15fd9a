"""A table run's manifest: ``output_dir/run-manifest.json``, one entry per row.

Each output's own credentials say what made it; the run manifest ties a whole run together,
so an auditor holding the folder can check that no output was added, dropped or swapped:
each row's outputs, the SHA-256 of each output's sidecar (its manifest as saved), and what
the row was charged. It is written through fsspec like ``results.parquet``, so a remote
``output_dir`` gets one too, and rewritten whole by a re-run.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from mediagen._version import __version__

if TYPE_CHECKING:
    import pandas as pd

RUN_MANIFEST = "run-manifest.json"
SIDECAR_SUFFIX = ".mediagen.json"


def _sha256(fs: Any, path: str) -> str | None:
    try:
        with fs.open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except (OSError, FileNotFoundError):
        return None


def _text(value: Any) -> str | None:
    return None if value is None or value != value else str(value)  # NaN / NA: no value


def run_manifest(results: pd.DataFrame, fs: Any, run_id: str | None) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for label, row in results.iterrows():
        outputs = []
        places = (_text(row.get("output")) or "").splitlines()
        states = (_text(row.get("credentials")) or "").splitlines()
        for n, place in enumerate(places):
            local = fs._strip_protocol(place) if "://" in place else place
            outputs.append(
                {
                    "output": place,
                    "credentials": states[n] if n < len(states) else None,
                    "manifest_sha256": _sha256(fs, local + SIDECAR_SUFFIX),
                }
            )
        credits = row.get("credits")
        rows.append(
            {
                "row": _text(label),
                "generation_id": _text(row.get("generation_id")),
                "status": _text(row.get("status")),
                "credits_charged": None if credits != credits else float(credits),
                "outputs": outputs,
            }
        )
    charged: list[float] = [r["credits_charged"] for r in rows if r["credits_charged"] is not None]
    return {
        "run_id": run_id,
        "mediagen_version": __version__,
        "credits_charged": float(sum(charged)),
        "rows": rows,
    }


def write_manifest(fs: Any, root: str, manifest: dict[str, Any], name: str) -> str:
    """``manifest`` as ``root/name``: written under a name no other writer uses (a retried
    task's part, two runs into one folder), then moved in place whole, so a reader never
    sees half of it."""
    import uuid

    final = root.rstrip("/") + "/" + name
    partial = f"{final}.{uuid.uuid4().hex}.partial"
    with fs.open(partial, "w") as handle:
        handle.write(json.dumps(manifest, indent=1, sort_keys=True))
    fs.mv(partial, final)
    return final


def write_run_manifest(
    output_dir: str, results: pd.DataFrame, run_id: str | None, name: str = RUN_MANIFEST
) -> str:
    """The manifest written to ``output_dir`` as ``name`` (a temporary name, then moved in
    place)."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(output_dir)
    return write_manifest(fs, root, run_manifest(results, fs, run_id), name)

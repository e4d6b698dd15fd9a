"""A comparison saved and opened again: one Parquet row per cell, media from the client's cache.

A row holds the cell's prompt, its setting and exact request body (JSON), what happened (status,
estimate, generation id, charge, latency, error, the idempotency key it was submitted with),
whether it is its row's winner and its rating (1-5, if rated), and where its media are on
this machine (the client's cache, which outlives the kernel). Opening the file rebuilds the
grid without pricing or running anything again: cells already run keep their results, a job
still running when the run was saved is followed to its end (submitted again with its key: the
same job, charged once), and a column added afterwards is the only thing the next Run pays for.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from mediagen.provenance._sidecar import sealed_as
from mediagen.widgets._compare_grid import ComparedGrid
from mediagen.widgets._media import MediaItem, make_item

#: The cell fields a file keeps as they are (the rest are JSON or derived).
CELL_FIELDS = (
    "status", "estimate", "generation_id", "credits", "latency_s", "error_code", "error_message",
    "idempotency_key",
)  # fmt: skip
#: States of a cell whose job had not ended when the run was saved.
UNFINISHED = ("queued", "submitting", "pending")


def save(grid: ComparedGrid, path: str | Path) -> Path:
    """The grid's Parquet file at ``path``, and beside it ``<name>.run-manifest.json``: every
    cell's outputs, the hash of each one's sidecar, and its charge (as a table run's)."""
    import pandas as pd

    from mediagen.datasets._run_manifest import write_run_manifest

    path = Path(path).expanduser()
    records = []
    outputs: list[str] = []  # each cell's media files, newline-joined (as a table's output)
    for (row, col), cell in sorted(grid._cells.items()):
        column = grid.plan.columns[col]
        media = [_saved_item(grid._media_items.get(i["key"]), i) for i in cell.get("items") or []]
        kept = [Path(m["path"]) for m in media if m]
        outputs.append("\n".join(str(p) for p in kept))
        records.append(
            {
                "row": row,
                "col": col,
                "prompt": grid.plan.prompts[row],
                "column": column.label,
                "setting": json.dumps(column.fields, sort_keys=True),
                "request": json.dumps(grid.plan.requests[(row, col)], sort_keys=True),
                **{name: cell.get(name) for name in CELL_FIELDS},
                "chosen": grid.chosen.get(str(row)) == col,
                "rating": grid.ratings.get(f"{row},{col}"),
                "media": json.dumps([m for m in media if m]),
                # each output's content credentials as saved: signed, unsigned or none
                "credentials": "\n".join(sealed_as(p) for p in kept) or None,
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(records).to_parquet(path, index=False)
    audit = pd.DataFrame(
        {
            "generation_id": [r["generation_id"] for r in records],
            "status": [r["status"] for r in records],
            "credits": [r["credits"] for r in records],
            "output": outputs,
            "credentials": [r["credentials"] for r in records],
        },
        index=[f"{r['row']},{r['col']}" for r in records],
    )
    write_run_manifest(str(path.parent), audit, None, name=run_manifest_name(path))
    return path


def run_manifest_name(path: Path) -> str:
    """The grid saved as ``cmp.parquet`` is audited by ``cmp.run-manifest.json``."""
    return f"{path.stem}.run-manifest.json"


def read(path: str | Path) -> list[dict[str, Any]]:
    """The saved cells of the file, one dict per cell (see :func:`save`)."""
    import pandas as pd

    return [_clean(r) for r in pd.read_parquet(Path(path).expanduser()).to_dict("records")]


def axes(records: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The saved grid's prompts (its rows) and settings (its columns), in their order."""
    prompts = {r["row"]: r["prompt"] for r in records}
    settings = {r["col"]: json.loads(r["setting"]) for r in records}
    return [prompts[i] for i in sorted(prompts)], [settings[i] for i in sorted(settings)]


def judgements(records: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """The saved winners (``{"<row>": <column>}``) and ratings (``{"<row>,<col>": <stars>}``)."""
    chosen = {str(r["row"]): r["col"] for r in records if r["chosen"]}
    ratings = {f"{r['row']},{r['col']}": int(r["rating"]) for r in records if r.get("rating")}
    return chosen, ratings


def restore_cell(grid: ComparedGrid, saved: dict[str, Any]) -> None:
    """Put a saved cell back: its request, its outcome, its media (where still on disk)."""
    position = (saved["row"], saved["col"])
    grid.plan.requests[position] = json.loads(saved["request"])
    cell = grid._cells[position]
    cell.update({name: saved.get(name) for name in CELL_FIELDS})
    if cell["status"] in UNFINISHED:
        # with its key it is submitted again as the same job (not charged twice); without
        # one nothing was sent yet
        cell["status"] = "queued" if cell.get("idempotency_key") else "priced"
    items = []
    for described in json.loads(saved.get("media") or "[]"):
        item = _item(described)
        if item is not None:
            grid.register_media(item)
            items.append({**item.describe(), "credentials": described.get("credentials")})
    cell["items"] = items


def _saved_item(item: MediaItem | None, described: dict[str, Any]) -> dict[str, Any] | None:
    return None if item is None else {**described, "path": str(item.path)}


def _item(described: dict[str, Any]) -> MediaItem | None:
    path = Path(described["path"])
    if not path.is_file():
        return None
    return make_item(
        path,
        described.get("content_type"),
        label=described.get("label") or "",
        width=described.get("width"),
        height=described.get("height"),
        duration_seconds=described.get("duration_seconds"),
    )


def _clean(record: dict[str, Any]) -> dict[str, Any]:
    """Parquet's missing numbers (NaN) back to None; numpy integers back to ints."""
    cleaned = {}
    for name, value in record.items():
        if isinstance(value, float) and math.isnan(value):
            value = None
        elif hasattr(value, "item"):
            value = value.item()
        cleaned[name] = value
    return cleaned

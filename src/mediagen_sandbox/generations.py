"""Generation rows as the spec's Generation JSON (the rows themselves: ``db.generations``)."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from .units import to_credits

UrlFor = Callable[[str, str], str]  # (asset_id, filename) -> signed URL


def generation_json(row: sqlite3.Row, url_for: UrlFor, data_dir: Path | None = None) -> dict:
    outputs = []
    if row["outputs_json"]:
        for out in json.loads(row["outputs_json"]):
            item = {
                "url": url_for(out["asset_id"], out["filename"]),
                "asset_id": out["asset_id"],
                "content_type": out["content_type"],
                "duration_seconds": out["duration_seconds"],
                "width": out["width"],
                "height": out["height"],
                "filename": out["filename"],
            }
            if out.get("b64") and data_dir is not None:
                item["b64_json"] = _b64_of(data_dir, out["asset_id"], out["filename"])
            outputs.append(item)
    charged = row["credits_charged"]
    completed = row["status"] == "completed"
    return {
        "id": row["id"],
        "type": row["type"],
        "status": row["status"],
        "model": row["model"],
        "prompt": row["prompt"],
        "created_at": row["created_at"],
        "completed_at": row["completed_at"],
        "credits_charged": None if charged is None else to_credits(charged),
        "error": (
            {"code": row["error_code"], "message": row["error_message"]}
            if row["error_code"]
            else None
        ),
        "idempotency_key": row["idempotency_key"],
        "outputs": outputs,
        "mode": row["mode"],
        "result_meta": (
            json.loads(row["result_meta_json"]) if completed and row["result_meta_json"] else None
        ),
    }


def _b64_of(data_dir: Path, asset_id: str, filename: str) -> str | None:
    ext = Path(filename).suffix
    path = data_dir / "assets" / f"{asset_id}{ext}"
    try:
        return base64.b64encode(path.read_bytes()).decode()
    except OSError:
        return None

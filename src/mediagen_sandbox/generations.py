"""Generation rows as wire JSON, and the keyset-paginated list query.

Cursors are opaque (base64url of ``created_at|id``) and select rows strictly older than the
last row of the previous page, ordered by (created_at, id) descending. New generations always
get a later ``created_at`` (:meth:`Store.next_created_at`), so they can only appear before the
first page: a cursor never skips or repeats a row while generations keep arriving.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from .store import Store, iso, parse_iso, to_credits

GENERATION_COLUMNS = (
    "id, type, status, model, mode, prompt, created_at, completed_at, credits_charged, "
    "error_code, error_message, idempotency_key, outputs_json, result_meta_json"
)

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


def fetch_generation(store: Store, generation_id: str, member_id: str) -> sqlite3.Row | None:
    return store.query_one(
        f"SELECT {GENERATION_COLUMNS} FROM generations WHERE id = ? AND member_id = ?",  # noqa: S608
        (generation_id, member_id),
    )


def encode_cursor(created_at: str, generation_id: str) -> str:
    raw = f"{created_at}|{generation_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """Raises ValueError for a cursor this server did not make."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created_at, generation_id = raw.split("|", 1)
        parse_iso(created_at)
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError("not a cursor returned by this server") from exc
    return created_at, generation_id


def list_generations(
    store: Store,
    member_id: str,
    limit: int,
    after: str | None,
    status: str | None,
    type_: str | None,
    model: str | None,
    created_after: str | None,
) -> tuple[list[sqlite3.Row], str | None]:
    where = ["member_id = ?"]
    params: list = [member_id]
    if status:
        where.append("status = ?")
        params.append(status)
    if type_:
        where.append("type = ?")
        params.append(type_)
    if model:
        where.append("model = ?")
        params.append(model)
    if created_after:
        where.append("created_at > ?")
        params.append(iso(parse_iso(created_after)))
    if after:
        created_at, generation_id = decode_cursor(after)
        where.append("(created_at, id) < (?, ?)")
        params.extend((created_at, generation_id))
    # The clauses are constants; every value is a bound parameter.
    clauses = " AND ".join(where)
    sql = f"SELECT {GENERATION_COLUMNS} FROM generations WHERE {clauses} "  # noqa: S608
    sql += "ORDER BY created_at DESC, id DESC LIMIT ?"
    params.append(limit + 1)
    rows = store.query_all(sql, tuple(params))
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        return rows, encode_cursor(last["created_at"], last["id"])
    return rows, None

"""Uploads (`POST /v1/uploads`, then `PUT` to the signed URL) and signed output downloads.

The PUT body is streamed to disk chunk by chunk (never held in memory, so a 1 GiB file costs a
few KB of RAM), then probed in a worker thread to confirm it really is the declared media type.
The `/files/...` URLs take no API key: the HMAC signature and its expiry are the credential.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
from datetime import datetime, timezone
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse
from starlette.concurrency import run_in_threadpool

from .. import media
from ..context import UPLOAD_PART_SUFFIX, SandboxContext
from ..db import assets
from ..errors import APIError, conflict, error_responses, field_error, forbidden, not_found
from ..schemas import UploadDone, UploadRequest, UploadTicket
from ..submit import new_asset_id
from ..units import iso
from .deps import authenticate, get_ctx
from .parsing import body_doc, read_body
from .responses import json_response

router = APIRouter()

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
CHUNK_FLUSH = 1 << 20


def _media_of(content_type: str) -> str:
    return content_type.split("/", 1)[0]


def _safe_filename(name: str) -> str:
    base = os.path.basename(name.replace("\\", "/"))
    return _SAFE_NAME.sub("_", base)[:120] or "upload"


@router.post(
    "/v1/uploads",
    response_model=UploadTicket,
    responses=error_responses(401, 403, 422, 429),
    openapi_extra=body_doc(UploadRequest),
    summary="Register a reference file; returns a signed upload URL",
)
async def register_upload(request: Request):
    who = authenticate(request)
    ctx: SandboxContext = request.app.state.ctx
    body = await read_body(UploadRequest, request, who.org_id)
    cfg = ctx.config.current
    if body.size_bytes > cfg.max_upload_bytes:
        raise field_error(
            ["body", "size_bytes"],
            f"the file is larger than the upload limit of {cfg.max_upload_bytes} bytes",
            "less_than_equal",
        )
    asset_id = await ctx.turns.run(who.org_id, _register, ctx, who, body)
    url, expires = ctx.signer.upload_url(ctx.base_url, asset_id, cfg.upload_url_ttl_seconds)
    return json_response(
        {
            "asset_id": asset_id,
            "upload_url": url,
            "required_headers": {
                "Content-Type": body.content_type,
                "Content-Length": str(body.size_bytes),
            },
            "expires_at": iso(datetime.fromtimestamp(expires, timezone.utc)),
            "media_type": _media_of(body.content_type),
            "status": "pending",
        }
    )


def _register(ctx: SandboxContext, who, body: UploadRequest) -> str:
    asset_id = new_asset_id()
    with ctx.store.write() as conn:
        assets.register_upload(
            conn,
            asset_id,
            who.org_id,
            who.member_id,
            _media_of(body.content_type),
            body.content_type,
            _safe_filename(body.filename),
            body.size_bytes,
        )
    return asset_id


def _check_signature(ctx: SandboxContext, purpose: str, asset_id: str, name: str, expires, sig):
    if expires is None or sig is None:
        raise forbidden("This URL is not signed (expires and sig are required).")
    problem = ctx.signer.check(purpose, asset_id, name, expires, sig)
    if problem == "expired":
        what = "upload URL" if purpose == "upload" else "download URL"
        raise forbidden(f"The {what} expired; request a new one.")
    if problem:
        raise forbidden("The URL signature is not valid.")


@router.put(
    "/files/upload/{asset_id}",
    response_model=UploadDone,
    responses=error_responses(403, 404, 409, 422),
    summary="Send an upload's bytes (signed URL; no API key)",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def put_upload(
    asset_id: str,
    request: Request,
    ctx: Annotated[SandboxContext, Depends(get_ctx)],
    expires: Annotated[str | None, Query()] = None,
    sig: Annotated[str | None, Query()] = None,
):
    _check_signature(ctx, "upload", asset_id, "", expires, sig)
    row = assets.upload_target(ctx.store, asset_id)
    if row is None:
        raise not_found(f"Asset {asset_id} not found.")
    if row["status"] == "ready":
        raise conflict(f"Asset {asset_id} already has its bytes.")
    expected_type, expected_size = row["content_type"], row["size_bytes"]
    sent_type = request.headers.get("content-type")
    if sent_type is None:
        raise field_error(
            ["header", "Content-Type"], f"required: send Content-Type: {expected_type}", "missing"
        )
    if sent_type.strip().lower() != expected_type:
        raise field_error(
            ["header", "Content-Type"],
            f"must be {expected_type} as registered (got {sent_type})",
            "content_type_mismatch",
        )
    sent_length = request.headers.get("content-length")
    if sent_length is None:
        raise field_error(
            ["header", "Content-Length"],
            f"required: send Content-Length: {expected_size}",
            "missing",
        )
    if not sent_length.isdigit() or int(sent_length) != expected_size:
        limit = ctx.config.current.max_upload_bytes
        too_big = sent_length.isdigit() and int(sent_length) > limit
        msg = (
            f"the body is larger than the upload limit of {limit} bytes"
            if too_big
            else f"must equal the registered size {expected_size} (got {sent_length})"
        )
        raise field_error(["header", "Content-Length"], msg, "size_mismatch")

    ext = media.extension_for(expected_type)
    final_path = ctx.data_dir / "assets" / f"{asset_id}{ext}"
    # Each PUT writes its own part file: two racing PUTs (a retry overtaking a slow first
    # attempt) never write into one file. A crash leaves it behind; startup removes it.
    part_path = final_path.with_name(f"{final_path.name}{UPLOAD_PART_SUFFIX}{secrets.token_hex(6)}")
    try:
        received = await _stream_to_file(request, part_path, expected_size)
        if received != expected_size:
            raise field_error(
                ["body"],
                f"received {received} bytes but {expected_size} were registered",
                "size_mismatch",
            )
        try:
            probe = await ctx.turns.run(row["org_id"], media.probe, str(part_path), expected_type)
        except ValueError as exc:
            raise field_error(
                ["body"], f"the bytes are not a valid {expected_type}: {exc}", "media_invalid"
            ) from None
        won = await run_in_threadpool(_commit_upload, ctx, asset_id, part_path, final_path, probe)
    finally:
        await run_in_threadpool(part_path.unlink, missing_ok=True)
    if not won:
        raise conflict(f"Asset {asset_id} already has its bytes (another upload finished first).")
    return json_response({"asset_id": asset_id, "status": "ready", "size_bytes": received})


def _commit_upload(ctx: SandboxContext, asset_id: str, part_path, final_path, probe) -> bool:
    """Make the part file the asset's bytes, unless a racing PUT did so first (then False).

    The rename happens inside the write transaction, so exactly one PUT's file becomes the
    asset's, and the row says ready only with a complete file in place."""
    with ctx.store.write() as conn:
        if assets.status(conn, asset_id) in (None, "ready"):
            return False
        os.replace(part_path, final_path)
        assets.mark_ready(
            conn, asset_id, str(final_path), probe.width, probe.height, probe.duration_seconds
        )
    return True


async def _stream_to_file(request: Request, path, limit: int) -> int:
    """Write the body to ``path`` as it arrives; stops counting past ``limit``."""
    received = 0
    pending: list[bytes] = []
    pending_size = 0
    loop = asyncio.get_running_loop()
    fh = await run_in_threadpool(open, path, "wb")
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                break
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size >= CHUNK_FLUSH:
                data = b"".join(pending)
                pending, pending_size = [], 0
                await loop.run_in_executor(None, fh.write, data)
        if pending:
            await loop.run_in_executor(None, fh.write, b"".join(pending))
    finally:
        await run_in_threadpool(fh.close)
    return received


@router.get(
    "/files/{asset_id}/{filename}",
    responses={
        **error_responses(403, 404, 422),
        200: {"content": {"application/octet-stream": {}}},
    },
    summary="Download an output (signed, expiring URL; no API key)",
)
async def get_file(
    asset_id: str,
    filename: str,
    ctx: Annotated[SandboxContext, Depends(get_ctx)],
    expires: Annotated[str | None, Query()] = None,
    sig: Annotated[str | None, Query()] = None,
):
    _check_signature(ctx, "output", asset_id, filename, expires, sig)
    row = assets.download(ctx.store, asset_id)
    if row is None or row["status"] != "ready" or row["filename"] != filename:
        raise not_found(f"File {asset_id}/{filename} not found.")
    if not await run_in_threadpool(os.path.exists, row["path"]):
        raise APIError(404, "not_found", f"File {asset_id}/{filename} is no longer stored.")
    return FileResponse(row["path"], media_type=row["content_type"], filename=filename)

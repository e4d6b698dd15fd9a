"""Sealing a saved file: its manifest embedded when a signer is configured, its sidecar always.

Runs where the client runs its other file work (``Blocking``): inline in ``Client``, on a
worker thread in ``AsyncClient``, so signing never holds an event loop. A file is signed in
memory (a long video streamed instead) and the signed bytes reach the disk whole: a download
is sealed before it is renamed into place, a file already in place is replaced by a rename;
a file c2pa cannot embed into (a format it does not know) keeps its bytes and gets an
unsigned sidecar that says why.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from pathlib import Path
from typing import Any

from mediagen._version import __version__
from mediagen.local._files import temp_for, write_atomic
from mediagen.provenance._record import ASSERTION_LABEL, file_sha256
from mediagen.provenance._sidecar import read_sidecar, write_sidecar
from mediagen.provenance._signing import current_signer, signing_context

log = logging.getLogger("mediagen")

DIGITAL_SOURCE_TYPE = "http://cv.iptc.org/newscodes/digitalsourcetype/trainedAlgorithmicMedia"
_MIME = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".mp4": "video/mp4",
    ".m4a": "audio/mp4",
    ".mp3": "audio/mpeg",
    ".wav": "audio/wav",
}


def mime_of(path: Path, content_type: str | None = None) -> str | None:
    return _MIME.get(path.suffix.lower()) or content_type


def manifest_definition(record: dict[str, Any], title: str, mime: str) -> dict[str, Any]:
    agent = {"name": "mediagen", "version": __version__}
    return {
        "claim_generator_info": [agent],
        "title": title,
        "format": mime,
        "assertions": [
            {
                "label": "c2pa.actions",
                "data": {
                    "actions": [
                        {
                            "action": "c2pa.created",
                            "digitalSourceType": DIGITAL_SOURCE_TYPE,
                            "softwareAgent": agent,
                        }
                    ]
                },
            },
            {"label": ASSERTION_LABEL, "data": record},
        ],
    }


# Files up to this size are signed in memory: read once, signed without a system call per c2pa
# read or seek, hashed from memory and written once. A larger one (a long video) is streamed.
IN_MEMORY = 64 << 20


def embed(data: bytes, record: dict[str, Any], signer: Any, mime: str, title: str) -> bytes:
    """``data`` (a file's bytes) carrying a signed C2PA manifest of ``record``."""
    import c2pa

    signed = io.BytesIO()
    definition = manifest_definition(record, title, mime)
    with c2pa.Builder(definition, signing_context()) as builder:
        builder.sign(signer, mime, io.BytesIO(data), signed)
    return signed.getvalue()


def embed_file(path: Path, record: dict[str, Any], signer: Any, mime: str, title: str) -> None:
    """``path`` replaced by a copy carrying a signed C2PA manifest of ``record``, streamed."""
    import c2pa

    temp = temp_for(path)
    try:
        definition = manifest_definition(record, title, mime)
        with (
            c2pa.Builder(definition, signing_context()) as builder,
            open(path, "rb") as source,
            open(temp, "w+b") as dest,
        ):
            builder.sign(signer, mime, source, dest)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def seal(
    path: Path,
    record: dict[str, Any],
    content_type: str | None = None,
    staged: Path | None = None,
) -> Path:
    """``path`` marked: signed in place when a signer is configured, and its sidecar written.

    A file already sealed (its sidecar names its current hash) is left as it is, so a copy of
    a signed cache file is not signed twice; one sealed unsigned is signed once a signer is
    configured. ``staged``: a temporary file of this process holding what ``path`` is to hold
    (a download not yet renamed into place): it is signed where it is, then renamed to
    ``path``, so a signed download is written once and ``path`` never shows it unsigned. It is
    removed when sealing fails."""
    path = Path(path)
    source = path if staged is None else Path(staged)
    try:
        sidecar = _credentials(path, source, record, content_type)
        if source != path:
            os.replace(source, path)
    except BaseException:
        if source != path:
            source.unlink(missing_ok=True)
        raise
    if sidecar is not None:
        write_sidecar(path, sidecar)
    return path


def _credentials(
    path: Path, source: Path, record: dict[str, Any], content_type: str | None
) -> dict[str, Any] | None:
    """The sidecar ``path`` gets once ``source`` is signed (when it can be), or None when
    ``source`` is sealed already."""
    signer = current_signer()
    known = read_sidecar(path)
    if (
        known
        and known.get("file_sha256") == file_sha256(source)
        and (known.get("signed") or signer is None)
    ):
        return None
    sidecar: dict[str, Any] = {ASSERTION_LABEL: record, "signed": False}
    mime = mime_of(path, content_type)
    digest = None
    if signer is None:
        sidecar["unsigned_reason"] = "no signer configured"
    elif mime is None:
        sidecar["unsigned_reason"] = "no C2PA format for this file"
    else:
        digest, reason = _sign(path, source, record, signer, mime)
        sidecar["signed"] = reason is None
        if reason is not None:
            sidecar["unsigned_reason"] = reason
    sidecar["file_sha256"] = digest or file_sha256(source)
    return sidecar


def _sign(
    path: Path, source: Path, record: dict[str, Any], signer: Any, mime: str
) -> tuple[str | None, str | None]:
    """``source`` signed: (its SHA-256, None); or (None, why not) when c2pa cannot sign it
    (a format it does not know), the file as it was."""
    signed = None
    size = source.stat().st_size
    try:
        if size > IN_MEMORY:
            embed_file(source, record, signer, mime, path.name)
        else:
            signed = embed(source.read_bytes(), record, signer, mime, path.name)
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("mediagen: %s saved without embedded credentials (%s)", path.name, reason)
        return None, reason
    if signed is None:
        return file_sha256(source), None
    if source == path:  # others may read it: replaced by a rename, never seen half written
        write_atomic(path, signed)
    else:
        _overwrite(source, signed, size)
    return hashlib.sha256(signed).hexdigest(), None


def _overwrite(staged: Path, data: bytes, size: int) -> None:
    """``staged`` (private to its save) holding ``data``, written where it is: it keeps its
    blocks, where a new file and a rename would cost a good part of the signing. A manifest
    only adds bytes, so the file is cut short only when ``data`` is shorter."""
    with open(staged, "r+b") as handle:
        handle.write(data)
        if len(data) < size:
            handle.truncate()

"""Sealing a saved file: its manifest embedded when a signer is configured, its sidecar always.

Runs where the client runs its other file work (``Blocking``): inline in ``Client``, on a
worker thread in ``AsyncClient``, so signing never holds an event loop. The signed copy is
written to a temporary name and renamed, because c2pa opens its destination before signing and
leaves an empty file when signing fails; a file c2pa cannot embed into (a format it does not
know) keeps its bytes and gets an unsigned sidecar that says why.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from mediagen._version import __version__
from mediagen.provenance._record import ASSERTION_LABEL, file_sha256
from mediagen.provenance._sidecar import read_sidecar, write_sidecar
from mediagen.provenance._signing import current_signer

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


# A thumbnail of a generated image is nearly the image again (twice the file, ten times the
# time); reading the file back after signing checks c2pa's own work, which its tests do.
_SETTINGS = {
    "builder": {"thumbnail": {"enabled": False}},
    "verify": {"verify_after_sign": False},
}


def embed(path: Path, record: dict[str, Any], signer: Any, mime: str) -> None:
    """``path`` replaced by a copy carrying a signed C2PA manifest of ``record``."""
    import c2pa

    temp = path.with_name(f".{path.name}.{os.getpid()}.c2pa.tmp")
    context = c2pa.Context.from_dict(_SETTINGS)
    try:
        definition = manifest_definition(record, path.name, mime)
        with (
            c2pa.Builder(definition, context) as builder,
            open(path, "rb") as source,
            open(temp, "wb") as dest,
        ):
            builder.sign(signer, mime, source, dest)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def seal(path: Path, record: dict[str, Any], content_type: str | None = None) -> Path:
    """``path`` marked: signed in place when a signer is configured, and its sidecar written.

    A file already sealed (its sidecar names its current hash) is left as it is, so a copy of
    a signed cache file is not signed twice; one sealed unsigned is signed once a signer is
    configured."""
    path = Path(path)
    signer = current_signer()
    known = read_sidecar(path)
    if (
        known
        and known.get("file_sha256") == file_sha256(path)
        and (known.get("signed") or signer is None)
    ):
        return path
    sidecar: dict[str, Any] = {ASSERTION_LABEL: record, "signed": False}
    mime = mime_of(path, content_type)
    if signer is not None and mime is not None:
        try:
            embed(path, record, signer, mime)
            sidecar["signed"] = True
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            log.warning("mediagen: %s saved without embedded credentials (%s)", path.name, reason)
            sidecar["unsigned_reason"] = reason
    elif signer is not None:
        sidecar["unsigned_reason"] = "no C2PA format for this file"
    else:
        sidecar["unsigned_reason"] = "no signer configured"
    sidecar["file_sha256"] = file_sha256(path)
    write_sidecar(path, sidecar)
    return path

"""Reading credentials back: the embedded C2PA manifest first, the sidecar otherwise.

C2PA's ``Valid`` only says the signature and hashes hold; whether the signer is one to trust
is ``Trusted``, which needs trust anchors (a team's own CA with ``trust_anchors``). So a file
is ``valid`` only when trusted with no failure, ``untrusted signer`` when intact but signed by
a certificate no anchor vouches for, and ``tampered`` with the first failure code when any
hash or signature check fails.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mediagen._extras import require
from mediagen.provenance._record import ASSERTION_LABEL, file_sha256
from mediagen.provenance._sidecar import read_sidecar

VALID = "valid"
UNTRUSTED = "untrusted signer"
TAMPERED = "tampered"
UNSIGNED = "unsigned"
NO_MANIFEST = "no manifest"
#: a PEM file of the CA certificates whose signers count as trusted when none is given
TRUST_ENV = "MEDIAGEN_C2PA_TRUST_ANCHORS"


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What a file's credentials say: ``status`` is one of ``valid``, ``untrusted signer``,
    ``tampered``, ``unsigned`` (a sidecar only, matching the file) or ``no manifest``."""

    path: Path
    status: str
    model: str | None = None
    generation_id: str | None = None
    credits_charged: float | None = None
    signer: str | None = None
    code: str | None = None
    record: dict[str, Any] | None = dataclasses.field(default=None, repr=False)

    def line(self) -> str:
        """One line for a terminal: file, model, generation, credits, signer, status."""
        status = f"{self.status} ({self.code})" if self.code else self.status
        if self.record is None:
            return f"{self.path}: {status}"
        credits = "?" if self.credits_charged is None else f"{self.credits_charged:g}"
        return (
            f"{self.path}: model={self.model} generation={self.generation_id} "
            f"credits={credits} signed_by={self.signer or '-'} {status}"
        )


def _context(trust_anchors: str | None) -> Any:
    import c2pa

    if trust_anchors is None:
        return None
    return c2pa.Context.from_dict(
        {"verify": {"verify_trust": True}, "trust": {"trust_anchors": trust_anchors}}
    )


def _signer_name(manifest: dict[str, Any]) -> str | None:
    info = manifest.get("signature_info") or {}
    return info.get("common_name") or info.get("issuer")


def _record_of(manifest: dict[str, Any]) -> dict[str, Any] | None:
    for assertion in manifest.get("assertions") or []:
        if assertion.get("label") == ASSERTION_LABEL:
            data = assertion.get("data")
            return data if isinstance(data, dict) else None
    return None


def _embedded(path: Path, context: Any) -> Verdict | None:
    import c2pa

    try:
        with (
            open(path, "rb") as stream,
            c2pa.Reader(_mime(path), stream, context=context) as reader,
        ):
            manifest = reader.get_active_manifest() or {}
            state = reader.get_validation_state()
            results = reader.get_validation_results() or {}
    except (c2pa.C2paError.ManifestNotFound, c2pa.C2paError.NotSupported):
        return None
    except c2pa.C2paError as exc:
        # a file c2pa cannot parse: a signed one damaged past reading, or not media at all
        return _from_sidecar(path, unreadable=str(exc).split(":", 1)[0] or "Other")
    active = results.get("activeManifest") or {}
    failures = [entry.get("code") for entry in active.get("failure") or []]
    failures = [code for code in failures if code != "signingCredential.untrusted"]
    if failures or state == "Invalid":
        status, code = TAMPERED, (failures[0] if failures else state)
    elif state == "Trusted":
        status, code = VALID, None
    else:
        status, code = UNTRUSTED, None
    record = _record_of(manifest) or {}
    return Verdict(
        path,
        status,
        record.get("model"),
        record.get("generation_id"),
        record.get("credits_charged"),
        _signer_name(manifest),
        code,
        record,
    )


def _mime(path: Path) -> str:
    from mediagen.provenance._seal import mime_of

    return mime_of(path) or "application/octet-stream"


def _from_sidecar(path: Path, unreadable: str | None = None) -> Verdict:
    sidecar = read_sidecar(path)
    record = (sidecar or {}).get(ASSERTION_LABEL)
    if not sidecar or not isinstance(record, dict):
        return Verdict(path, NO_MANIFEST, code=f"unreadable: {unreadable}" if unreadable else None)
    fields = (record.get("model"), record.get("generation_id"), record.get("credits_charged"))
    if unreadable and sidecar.get("signed"):
        return Verdict(path, TAMPERED, *fields, None, f"unreadable: {unreadable}", record)
    if sidecar.get("signed"):
        # the sidecar says a manifest was embedded, and the file has none: replaced or stripped
        return Verdict(path, TAMPERED, *fields, None, "mediagen.manifestMissing", record)
    if sidecar.get("file_sha256") != file_sha256(path):
        return Verdict(path, TAMPERED, *fields, None, "mediagen.sidecar.hashMismatch", record)
    return Verdict(path, UNSIGNED, *fields, None, None, record)


def verify(path: str | Path, *, trust_anchors: str | Path | None = None) -> Verdict:
    """The credentials of the file at ``path``, checked: signature and hash binding of an
    embedded C2PA manifest, else the file against its mediagen sidecar. ``trust_anchors`` is
    a PEM file (or PEM text) of the CA certificates whose signers count as trusted (default:
    the file ``MEDIAGEN_C2PA_TRUST_ANCHORS`` names, if set)."""
    require("provenance", "mediagen.verify()", ("c2pa",))
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"no file at {file}")
    anchors = _anchors(trust_anchors)
    found = _embedded(file, _context(anchors))
    return found if found is not None else _from_sidecar(file)


def _anchors(trust_anchors: str | Path | None) -> str | None:
    if trust_anchors is None:
        trust_anchors = os.environ.get(TRUST_ENV) or None
    if trust_anchors is None:
        return None
    text = str(trust_anchors)
    if "-----BEGIN" in text:
        return text
    return Path(trust_anchors).read_text(encoding="ascii")


def verify_many(
    paths: Iterable[str | Path], *, trust_anchors: str | Path | None = None
) -> list[Verdict]:
    """:func:`verify` for each path, the anchors read once."""
    anchors = _anchors(trust_anchors)
    return [verify(path, trust_anchors=anchors) for path in paths]


def as_json(verdict: Verdict) -> str:
    return json.dumps({"path": str(verdict.path), "status": verdict.status, "code": verdict.code})


def summary(path: str | Path) -> dict[str, Any] | None:
    """What a widget says of a saved file's credentials (JSON for a trait), or None when the
    file has none. Blocking (C2PA reads and hashes the file): widgets call it off their loop.

    Without the ``provenance`` extra nothing could have signed here, so the sidecar alone is
    read; a sidecar saying the file was signed elsewhere is then reported as not checked
    rather than as tampered."""
    file = Path(path)
    if importlib.util.find_spec("c2pa") is not None:
        verdict = verify(file)
    else:
        sidecar = read_sidecar(file) or {}
        if sidecar.get("signed"):
            record = sidecar.get(ASSERTION_LABEL) or {}
            return said(
                "not checked",
                model=record.get("model"),
                code="install mediagen[provenance] to check a signature",
            )
        verdict = _from_sidecar(file)
    if verdict.status == NO_MANIFEST:  # nothing of ours to show, readable or not
        return None
    return said(verdict.status, model=verdict.model, signer=verdict.signer, code=verdict.code)


def said(
    status: str, *, model: str | None = None, signer: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """What a widget shows of a file's credentials: its verdict, the model that made it, who
    signed it and the validation code (JSON, for a trait)."""
    return {"status": status, "model": model, "signer": signer, "code": code}

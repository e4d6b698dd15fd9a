"""Content credentials for every file mediagen saves.

A generated file is marked as generated (EU AI Act Art. 50 asks for a machine-readable mark)
by a C2PA manifest embedded in it when a signer is configured, and always by a JSON sidecar
beside it (``_sidecar`` says why JSON). ``verify`` reads either back.

The package loads no C2PA code until something is signed or read: ``c2pa`` is a compiled
library and saving without a signer never needs it.
"""

from __future__ import annotations

from mediagen.provenance._record import ASSERTION_LABEL, build_record
from mediagen.provenance._seal import seal
from mediagen.provenance._signing import SignerConfig, configure, current_signer
from mediagen.provenance._verify import Verdict, summary, verify, verify_many

__all__ = [
    "ASSERTION_LABEL",
    "SignerConfig",
    "Verdict",
    "build_record",
    "configure",
    "current_signer",
    "seal",
    "summary",
    "verify",
    "verify_many",
]

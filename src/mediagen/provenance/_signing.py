"""Who signs: a certificate chain and key named by ``MEDIAGEN_C2PA_CERT`` / ``MEDIAGEN_C2PA_KEY``,
or a callback given in code for keys that never leave a KMS or HSM.

The key file is read when a signer is made and handed straight to c2pa: no mediagen object
keeps its bytes, so no repr, log or error can show them. ES256 is the one algorithm offered:
it is what C2PA's trust lists expect of a P-256 certificate.

Making a signer reads and parses the chain and key, and a c2pa ``Context`` parses its settings:
both are made once and shared by every save (c2pa guards them for use from several threads),
and again in a forked child, where c2pa refuses its parent's. A signer is made again when its
chain or key file changes on disk (a renewed certificate), which its files' modification times
and sizes show.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mediagen._extras import require

CERT_ENV = "MEDIAGEN_C2PA_CERT"
KEY_ENV = "MEDIAGEN_C2PA_KEY"


@dataclasses.dataclass(frozen=True)
class SignerConfig:
    """A chain (PEM, leaf first) and either a key file or ``sign(data) -> signature``."""

    certificate_chain: Path | bytes
    key_path: Path | None = None
    sign: Callable[[bytes], bytes] | None = dataclasses.field(default=None, repr=False)

    def chain_pem(self) -> bytes:
        if isinstance(self.certificate_chain, bytes):
            return self.certificate_chain
        return Path(self.certificate_chain).read_bytes()


_lock = threading.Lock()
_configured: SignerConfig | None = None
# the signers made, by configuration: configuring the same files again (a notebook cell run
# again) signs with the signer made for them, as long as the files are unchanged
_Stamp = tuple[int, int] | None
_cache: dict[SignerConfig, tuple[tuple[_Stamp, ...], Any]] = {}
_KEPT = 8
_context: Any = None

# A thumbnail of a generated image is nearly the image again (twice the file, ten times the
# time); reading the file back after signing checks c2pa's own work, which its tests do.
SETTINGS = {
    "builder": {"thumbnail": {"enabled": False}},
    "verify": {"verify_after_sign": False},
}


def configure(
    *,
    certificate_chain: str | Path | bytes | None = None,
    key: str | Path | None = None,
    sign: Callable[[bytes], bytes] | None = None,
) -> None:
    """Sign what is saved from now on in this process: with the key file ``key``, or with
    ``sign`` (a callback given the bytes to sign, returning an ES256 signature, raw r||s or
    DER). ``configure()`` with nothing goes back to the environment variables."""
    global _configured
    if certificate_chain is None:
        if key is not None or sign is not None:
            raise ValueError("a signer needs its certificate chain")
        config = None
    else:
        if (key is None) == (sign is None):
            raise ValueError("give a key file or a sign callback, one of them")
        chain = (
            certificate_chain if isinstance(certificate_chain, bytes) else Path(certificate_chain)
        )
        config = SignerConfig(chain, Path(key) if key is not None else None, sign)
    with _lock:
        _configured = config


def _from_environment() -> SignerConfig | None:
    cert, key = os.environ.get(CERT_ENV), os.environ.get(KEY_ENV)
    if not cert or not key:
        return None
    return SignerConfig(Path(cert), Path(key))


def current_signer() -> Any:
    """The c2pa ``Signer`` to sign with, or None when none is configured (made once per
    configuration: a Signer from c2pa can sign many times)."""
    config = _configured or _from_environment()
    if config is None:
        return None
    stamps = _stamps(config)
    with _lock:
        made, signer = _cache.get(config, (None, None))
        if signer is None or made != stamps:
            if len(_cache) >= _KEPT:
                _cache.clear()
            signer = _make(config)
            _cache[config] = (stamps, signer)
        return signer


def signing_context() -> Any:
    """The c2pa ``Context`` every manifest is built in (``SETTINGS``), made once."""
    global _context
    with _lock:
        if _context is None:
            import c2pa

            _context = c2pa.Context.from_dict(SETTINGS)
        return _context


def _forget_in_child() -> None:
    """A forked child makes its own signers and Context: c2pa refuses, as closed, an object
    made before the fork (its native locks may be held by threads the child does not have),
    and so may this module's lock be."""
    global _lock, _context
    _lock = threading.Lock()
    _cache.clear()
    _context = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _stamps(config: SignerConfig) -> tuple[_Stamp, ...]:
    """When and how large the chain and key files are now: a signer made before either changed
    is stale."""
    files = (config.certificate_chain, config.key_path)
    return tuple(_stamp(file) for file in files if isinstance(file, Path))


def _stamp(file: Path) -> _Stamp:
    try:
        stat = file.stat()
    except OSError:  # a missing file: making the signer says so
        return None
    return (stat.st_mtime_ns, stat.st_size)


def _make(config: SignerConfig) -> Any:
    require("provenance", "signing saved outputs", ("c2pa",))
    import c2pa

    chain = config.chain_pem()
    if config.sign is not None:
        return c2pa.Signer.from_callback(
            config.sign, c2pa.C2paSigningAlg.ES256, chain.decode(), None
        )
    assert config.key_path is not None
    info = c2pa.C2paSignerInfo(
        alg=c2pa.C2paSigningAlg.ES256,
        sign_cert=chain,
        private_key=config.key_path.read_bytes(),
        ta_url=None,
    )
    return c2pa.Signer.from_info(info)

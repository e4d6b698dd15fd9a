"""Everything a request handler needs, built once per server: store, runner, settings, secrets.

The data directory holds ``sandbox.db`` (SQLite, WAL), ``assets/`` (uploaded and generated
files) and three 0600 secret files: ``url_secret`` (signs upload/output URLs),
``admin_token`` and ``bootstrap_key`` (the plaintext of the one ready-made API key printed at
startup, so it stays the same across restarts; the database keeps only its hash).
"""

from __future__ import annotations

import hmac
import os
import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from .bodies import BodyParser
from .config import ConfigHolder, RuntimeConfig
from .db import accounts, ledger
from .db.store import Store
from .fairness import Door, OrgTurns
from .jobs import JobRunner
from .media.formats import RENDERING_PREFIX
from .ratelimit import RateLimiter
from .signing import URLSigner
from .units import to_cents

UPLOAD_PART_SUFFIX = ".part-"  # upload bytes still arriving: ``<asset file>.part-<random>``
# What a killed server leaves half-written: uploads cut off mid-PUT and renders in progress.
# Nothing else writes these names, and pending generations are rendered again after a restart.
CRASH_LEFTOVERS = ("*.part*", f"{RENDERING_PREFIX}*")

BOOTSTRAP_ORG = "org_bootstrap"
BOOTSTRAP_MEMBER = "mem_bootstrap"
BOOTSTRAP_BALANCE = 10_000.0


def default_data_dir() -> Path:
    return Path(os.path.expanduser("~/.mediagen/sandbox"))


def _secret_file(path: Path, make: callable) -> str:
    """Read a secret file, or create it with mode 0600."""
    if path.exists():
        return path.read_text().strip()
    value = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value


@dataclass
class SandboxContext:
    data_dir: Path
    store: Store
    config: ConfigHolder
    signer: URLSigner
    runner: JobRunner
    admin_token: str
    bootstrap_key: str
    limiter: RateLimiter = field(default_factory=RateLimiter)
    admission: Door = field(default_factory=Door)
    turns: OrgTurns = field(init=False)
    bodies: BodyParser = field(default_factory=BodyParser)
    rng: random.Random = field(default_factory=random.Random)
    base_url: str = "http://127.0.0.1:8765"

    @classmethod
    def open(
        cls, data_dir: Path, config: RuntimeConfig, workers: int | None = None
    ) -> SandboxContext:
        data_dir = Path(data_dir).expanduser().resolve()
        (data_dir / "assets").mkdir(parents=True, exist_ok=True)
        remove_crash_leftovers(data_dir)
        store = Store(data_dir / "sandbox.db")
        url_secret = _secret_file(data_dir / "url_secret", lambda: secrets.token_hex(32))
        admin_token = _secret_file(
            data_dir / "admin_token", lambda: "mgadm_" + secrets.token_urlsafe(24)
        )
        bootstrap_key = _secret_file(data_dir / "bootstrap_key", accounts.new_api_key)
        _ensure_bootstrap_tenant(store, bootstrap_key)
        return cls(
            data_dir=data_dir,
            store=store,
            config=ConfigHolder(config),
            signer=URLSigner(url_secret.encode()),
            runner=JobRunner(store, workers=workers),
            admin_token=admin_token,
            bootstrap_key=bootstrap_key,
        )

    def __post_init__(self) -> None:
        self.turns = OrgTurns(door=self.admission)

    def is_admin_token(self, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self.admin_token.encode())

    def lookup_key(self, token: str) -> tuple[str, accounts.Caller | None]:
        return accounts.lookup_key(self.store, token)

    def output_url(self, asset_id: str, filename: str) -> str:
        ttl = self.config.current.output_url_ttl_seconds
        return self.signer.output_url(self.base_url, asset_id, filename, ttl)


def remove_crash_leftovers(data_dir: Path) -> int:
    """Delete the half-written files a crash left in the data dir; returns how many."""
    removed = 0
    for folder in (data_dir / "assets", data_dir / "samples"):
        for pattern in CRASH_LEFTOVERS:
            for path in folder.glob(pattern):
                path.unlink(missing_ok=True)
                removed += 1
    return removed


def _ensure_bootstrap_tenant(store: Store, api_key: str) -> None:
    """The ready-made organization, member and key printed at startup (idempotent)."""
    with store.write() as conn:
        if not accounts.org_exists(conn, BOOTSTRAP_ORG):
            accounts.create_org(conn, "Sandbox", "pro", 0.0, BOOTSTRAP_ORG)
            ledger.grant(conn, BOOTSTRAP_ORG, to_cents(BOOTSTRAP_BALANCE), note="initial grant")
            accounts.create_member(conn, BOOTSTRAP_ORG, "Sandbox owner", None, BOOTSTRAP_MEMBER)
        if accounts.key_hash_exists(conn, api_key):
            return
        accounts.create_key(
            conn, BOOTSTRAP_MEMBER, BOOTSTRAP_ORG, "bootstrap", None, api_key=api_key
        )

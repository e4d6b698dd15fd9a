"""Client settings: arguments, else the environment; the key never shows in a repr."""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import os
import ssl
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mediagen.client._errors import MediagenError

ENV_API_KEY = "MEDIAGEN_API_KEY"
ENV_BASE_URL = "MEDIAGEN_BASE_URL"
ENV_CACHE_DIR = "MEDIAGEN_CACHE_DIR"
ENV_ALLOW_INSECURE_HTTP = "MEDIAGEN_ALLOW_INSECURE_HTTP"
DEFAULT_BASE_URL = "http://127.0.0.1:8765"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
DEFAULT_POLL_INTERVAL = (2.0, 5.0)
DEFAULT_CONCURRENCY = 4  # submits of one batch in flight at once


class MissingAPIKeyError(MediagenError):
    """No API key was given and ``MEDIAGEN_API_KEY`` is not set."""


class _Secret(str):
    """A str whose repr hides the value (the API key)."""

    def __repr__(self) -> str:
        return "'***'"


def check_key_chars(key: str) -> None:
    """A key goes into an HTTP header: a line break, a space or a non-ASCII character inside
    it (a bad copy and paste) would make every request fail with an error quoting the header,
    key included. Refuse it here, without showing it."""
    bad = [c for c in key if not (c.isascii() and c.isprintable() and not c.isspace())]
    if bad:
        raise ValueError(
            "The API key contains characters that cannot be sent in a header "
            f"({', '.join(sorted({repr(c) for c in bad}))}); check how it was copied."
        )


def ssl_context() -> ssl.SSLContext:
    """The TLS trust every client this process builds verifies with (httpx's default: certifi,
    or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``). Loading a CA bundle takes tens of milliseconds,
    so it is loaded once per setting and shared, as httpx advises, not once per client: each
    studio, job card and ``to_async()`` builds an httpx client of its own."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def default_cache_dir() -> Path:
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mediagen"


def normalize_poll_interval(value: Any) -> tuple[float, float]:
    """``2`` -> (2, 2); ``(2, 5)`` -> (2, 5): start interval and the cap it backs off to."""
    if value is None:
        return DEFAULT_POLL_INTERVAL
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("poll_interval must be >= 0")
        return (float(value), float(value))
    first, cap = value
    if first < 0 or cap < first:
        raise ValueError("poll_interval=(start, cap) needs 0 <= start <= cap")
    return (float(first), float(cap))


def is_loopback(host: str | None) -> bool:
    """``localhost``, 127.0.0.0/8 or ::1: a name or address that never leaves this machine.

    ``localhost.`` (with the root's dot) is not: as a fully qualified name it skips the hosts
    file on many resolvers and is asked of DNS, which may answer with any address."""
    if not host:
        return False
    host = host.lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_transport(base_url: str, allow_insecure_http: bool) -> None:
    """Every request carries the key: over plain ``http://`` anyone on the path reads it. That
    is fine for this machine (the sandbox), and refused for any other host unless allowed."""
    parts = urlsplit(base_url)
    if parts.scheme != "http" or allow_insecure_http or is_loopback(parts.hostname):
        return
    raise ValueError(
        f"base_url {shown_host(base_url)!r} is plain http:// to another machine: the API key "
        "would cross the network unencrypted. Use https://, or, on a network you trust, pass "
        f"allow_insecure_http=True (or set {ENV_ALLOW_INSECURE_HTTP}=1). Nothing was sent."
    )


def shown_host(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, without any ``user:password@``."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class ClientConfig:
    api_key: str = field(repr=False)
    base_url: str
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = DEFAULT_MAX_RETRIES
    poll_interval: tuple[float, float] = DEFAULT_POLL_INTERVAL
    cache_dir: Path = field(default_factory=default_cache_dir)
    journal: Any = None  # None: default path under cache_dir; False: off; else a path
    #: finished generations stay in the journal this long, then fold into its settled file
    journal_keep_days: float = 30.0
    validate: bool = True
    download: bool = True
    estimate: bool = False
    rate_limit: float | None = None  # requests per second for this key (None: only 429 gating)
    budget: float | None = None
    retry_base_delay: float = 0.5
    retry_max_delay: float = 8.0
    max_retry_after: float = 60.0
    #: send the key over plain http:// beyond this machine (refused unless set)
    allow_insecure_http: bool = False

    def __post_init__(self) -> None:
        check_transport(self.base_url, self.allow_insecure_http)

    @classmethod
    def resolve(
        cls, api_key: str | None = None, base_url: str | None = None, **options: Any
    ) -> ClientConfig:
        key = api_key if api_key is not None else os.environ.get(ENV_API_KEY)
        if not key or not key.strip():
            raise MissingAPIKeyError(
                "No API key: pass Client(api_key=...) or set the MEDIAGEN_API_KEY environment "
                "variable (for the local sandbox, `mediagen sandbox` prints one)."
            )
        check_key_chars(key.strip())
        url = base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        url = url.strip().rstrip("/")
        if url.endswith("/v1"):
            url = url[: -len("/v1")]
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http(s) URL, not {url!r}")
        if "poll_interval" in options:
            options["poll_interval"] = normalize_poll_interval(options["poll_interval"])
        if options.get("cache_dir") is None:
            options.pop("cache_dir", None)
        else:
            options["cache_dir"] = Path(options["cache_dir"]).expanduser()
        for name in ("timeout", "max_retries", "journal_keep_days"):
            if options.get(name) is None:
                options.pop(name, None)
        if options.get("allow_insecure_http") is None:
            options["allow_insecure_http"] = _env_flag(ENV_ALLOW_INSECURE_HTTP)
        return cls(api_key=_Secret(key.strip()), base_url=url, **options)

    def replace(self, **changes: Any) -> ClientConfig:
        return replace(self, **changes)

    @property
    def key_fingerprint(self) -> str:
        """A short non-secret id of the key (a hash prefix): tells keys apart in the journal."""
        return "key_" + hashlib.sha256(self.api_key.encode()).hexdigest()[:12]

    @property
    def journal_path(self) -> Path | None:
        if self.journal is False:
            return None
        if self.journal is None or self.journal is True:
            return self.cache_dir / "journal.jsonl"
        return Path(self.journal).expanduser()

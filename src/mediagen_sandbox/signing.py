"""HMAC-signed, expiring URLs for uploads and outputs (outside `/v1`; they take no API key).

The secret lives in the data directory (0600), so URLs issued before a restart stay valid
until they expire.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from urllib.parse import quote


class URLSigner:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _sig(self, purpose: str, asset_id: str, name: str, expires: int) -> str:
        msg = f"{purpose}\n{asset_id}\n{name}\n{expires}".encode()
        return hmac.new(self._secret, msg, hashlib.sha256).hexdigest()

    def upload_url(self, base_url: str, asset_id: str, ttl: float) -> tuple[str, int]:
        expires = int(time.time() + ttl)
        sig = self._sig("upload", asset_id, "", expires)
        return f"{base_url}/files/upload/{asset_id}?expires={expires}&sig={sig}", expires

    def output_url(self, base_url: str, asset_id: str, filename: str, ttl: float) -> str:
        expires = int(time.time() + ttl)
        sig = self._sig("output", asset_id, filename, expires)
        return f"{base_url}/files/{asset_id}/{quote(filename)}?expires={expires}&sig={sig}"

    def check(self, purpose: str, asset_id: str, name: str, expires: str, sig: str) -> str | None:
        """None when valid, else why not: ``"invalid"`` or ``"expired"``."""
        try:
            expires_at = int(expires)
        except ValueError:
            return "invalid"
        good = self._sig(purpose, asset_id, name, expires_at)
        # Bytes, not str: compare_digest refuses non-ASCII text (a TypeError, not "invalid").
        if not hmac.compare_digest(good.encode(), sig.encode("utf-8", "surrogatepass")):
            return "invalid"
        if time.time() > expires_at:
            return "expired"
        return None

"""Masking secrets in text that came from elsewhere (error bodies, journal values).

A server or a proxy may echo the request's headers in an error body. Whatever the client
shows of such text (exception messages and reprs, ``details``, the decoded body, log lines,
the journal) goes through :func:`redact` first: the known secrets are replaced, and so is
anything that looks like a credential header value, whoever's it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"

# ``Authorization: Bearer abc``, ``"authorization": "Bearer abc"``, ``X-Api-Key=abc`` ...
_CREDENTIAL_FIELD = re.compile(
    r"""(?ix)
    ( (?:proxy-)?authorization | x-api-key | api[_-]?key )
    ( ["']? \s* [:=] \s* ["']? )
    ( (?:bearer|basic|token) \s+ )?
    [^\s"',;}\]]+
    """
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{6,}")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret in ``secrets`` and every credential-looking value masked."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, MASK)
    text = _CREDENTIAL_FIELD.sub(lambda m: f"{m[1]}{m[2]}{m[3] or ''}{MASK}", text)
    return _BEARER.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)


def redact_bytes(data: bytes, secrets: Iterable[str] = ()) -> bytes:
    """The same for a raw body, before anything decodes it."""
    for secret in secrets:
        if secret:
            data = data.replace(secret.encode(), MASK.encode())
    return data


def redact_value(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A decoded JSON value with every string in it redacted."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {k: redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, secrets) for v in value]
    return value


def shown_url(url: str) -> str:
    """``url`` without the ``user:password@`` part (a proxy or service credential)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    if "@" in host:
        host = MASK + "@" + host.rsplit("@", 1)[1]
    return f"{scheme}{sep}{host}{slash}{path}"

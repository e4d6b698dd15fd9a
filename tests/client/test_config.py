"""Configuration from arguments or the environment; the key never shows in a repr."""

from __future__ import annotations

import pytest

import mediagen
from mediagen.client._config import ClientConfig

SECRET = "mgk_test_SECRET_0123456789abcdef"


def test_arguments_win_over_the_environment(monkeypatch):
    monkeypatch.setenv("MEDIAGEN_API_KEY", "from-env")
    monkeypatch.setenv("MEDIAGEN_BASE_URL", "https://env.example:1")
    config = ClientConfig.resolve(SECRET, "https://arg.example:2/v1/")
    assert config.api_key == SECRET
    assert config.base_url == "https://arg.example:2"
    from_env = ClientConfig.resolve()
    assert (from_env.api_key, from_env.base_url) == ("from-env", "https://env.example:1")


def test_a_missing_key_is_refused_before_anything_is_sent(monkeypatch):
    monkeypatch.delenv("MEDIAGEN_API_KEY", raising=False)
    with pytest.raises(mediagen.MissingAPIKeyError, match="MEDIAGEN_API_KEY"):
        mediagen.Client(base_url="http://127.0.0.1:9")
    with pytest.raises(mediagen.MissingAPIKeyError):
        mediagen.Client(api_key="   ", base_url="http://127.0.0.1:9")


def test_a_bad_base_url_is_refused():
    with pytest.raises(ValueError, match="http"):
        ClientConfig.resolve(SECRET, "ftp://example")


def test_the_key_is_not_in_any_repr(tmp_path):
    client = mediagen.Client(api_key=SECRET, base_url="http://127.0.0.1:9", cache_dir=tmp_path)
    try:
        for shown in (
            repr(client),
            str(client),
            repr(client._config),
            repr(client._config.api_key),
            repr(client.generations),
            repr(vars(client)),
        ):
            assert SECRET not in shown
        assert SECRET not in client._config.key_fingerprint
    finally:
        client.close()


def test_poll_interval_accepts_a_number_or_start_and_cap():
    from mediagen.client._config import normalize_poll_interval

    assert normalize_poll_interval(1) == (1.0, 1.0)
    assert normalize_poll_interval((2, 5)) == (2.0, 5.0)
    with pytest.raises(ValueError):
        normalize_poll_interval((5, 2))


def _pool_ssl_context(client):
    """The SSL context the client's httpx connection pool verifies servers with."""
    return client._http._transport._pool._ssl_context


def test_every_client_verifies_with_one_loaded_ca_bundle(monkeypatch, tmp_path):
    """A CA bundle is loaded once per trust setting, not once per client (a studio, each job
    card and every ``to_async()`` builds a client); ``SSL_CERT_FILE`` still takes effect."""
    import asyncio

    import certifi

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first = mediagen.Client(api_key=SECRET, base_url="http://127.0.0.1:9", cache_dir=tmp_path)
    second = mediagen.Client(api_key=SECRET, base_url="https://127.0.0.1:9", cache_dir=tmp_path)
    twin = first.to_async()
    try:
        shared = _pool_ssl_context(first)
        assert _pool_ssl_context(second) is shared
        assert _pool_ssl_context(twin) is shared
        assert shared.verify_mode.name == "CERT_REQUIRED"
        assert shared.check_hostname
        monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
        own = mediagen.Client(api_key=SECRET, base_url="http://127.0.0.1:9", cache_dir=tmp_path)
        assert _pool_ssl_context(own) is not shared
        own.close()
    finally:
        first.close()
        second.close()
        asyncio.run(twin.aclose())

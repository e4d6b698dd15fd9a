"""Fixtures for widget tests against the real sandbox (``sandbox``/``tenant`` from tests/).

Widgets run their background work as asyncio tasks on the running loop, like in a kernel: each
test drives a scenario inside ``run(...)`` (one ``asyncio.run``) and sets traits the way a view
would. ``until`` waits for a condition instead of sleeping a fixed time.

- ``make_client(tenant, **options)``: a ``mediagen.Client`` on the sandbox with a private cache
  and journal under ``tmp_path``, polling fast (closed after the test). Widgets take it as it
  is; a scenario ends with ``await aclose(client)`` (``mediagen.widgets._loop_client``), which
  closes the ``AsyncClient`` the widgets made from it on that loop.

``run`` and ``until`` live in ``widget_loop`` (a conftest cannot be imported by name: the
browser tests' conftest would shadow it).
"""

from __future__ import annotations

from typing import Any

import pytest

import mediagen

FAST_POLL = 0.05


@pytest.fixture
def make_client(sandbox, tmp_path):
    clients: list[Any] = []

    def make(tenant, cache_dir=None, **options: Any):
        client = mediagen.Client(
            api_key=tenant.api_key,
            base_url=sandbox.base_url,
            cache_dir=cache_dir or tmp_path / "cache",
            poll_interval=FAST_POLL,
            **options,
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()

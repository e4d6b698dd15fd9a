"""Fixtures of the client's tests (the sandbox and tenants come from ``tests/conftest.py``).

- ``catalog``: every model entry by id (``GET /v1/models``, read once per session).
- ``make_client(tenant=..., recorder=..., **options)``: a ``mediagen.Client`` on the sandbox
  with fast polling, a private cache and journal (``tmp_path``); closed after the test.
- ``client``: ``make_client()`` for the test's own tenant.
- ``media``: a real PNG, WAV and MP4 made once per session.
- ``assets``: those files uploaded for the tenant, plus a completed video generation id, keyed
  like the catalog's placeholders (``image``, ``video``, ``audio``, ``generation_video``).
"""

from __future__ import annotations

import httpx
import pytest
from client_helpers import Recorder, make_mp4, make_png, make_wav

import mediagen

FAST_POLL = (0.02, 0.1)


@pytest.fixture(scope="session")
def media(tmp_path_factory):
    root = tmp_path_factory.mktemp("media")
    return {
        "image": make_png(root / "ref.png"),
        "image_2": make_png(root / "ref2.png", 64, 96),
        "audio": make_wav(root / "voice.wav"),
        "video": make_mp4(root / "motion.mp4"),
    }


@pytest.fixture
def make_client(sandbox, tenant, tmp_path):
    made = []

    def make(tenant=tenant, recorder: Recorder | None = None, **options):
        options.setdefault("poll_interval", FAST_POLL)
        options.setdefault("cache_dir", tmp_path / "cache")
        if recorder is not None:
            options["http_client"] = httpx.Client(timeout=60, event_hooks=recorder.hooks())
        client = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, **options)
        made.append(client)
        if recorder is not None:
            made.append(options["http_client"])
        return client

    yield make
    for item in made:
        item.close()


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def assets(client, media):
    found = {name: client.uploads.upload(path).asset_id for name, path in media.items()}
    video = client.videos.create(**_cheap_video(client))
    found["generation_video"] = client.generations.wait(video, timeout=60, download=False).id
    return found


def _cheap_video(client) -> dict:
    entry = client.models.get("vidra-2")
    return entry.example("text_to_video")

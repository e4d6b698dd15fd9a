"""The API key goes only to the API's own ``/v1``: never to upload or output URLs, logs,
exceptions, the journal or a repr (checked on every request of a full session)."""

from __future__ import annotations

import logging
import pickle

import pytest
from client_helpers import Recorder, example

import mediagen


def test_the_key_only_ever_goes_to_v1(
    sandbox, tenant, make_client, catalog, media, caplog, tmp_path
):
    caplog.set_level(logging.DEBUG)
    recorder = Recorder()
    client = make_client(recorder=recorder, journal=tmp_path / "journal.jsonl")
    asset = client.uploads.upload(media["image"])
    request = example(catalog, "vidra-2", "reference_to_video")
    request["reference_images"] = [asset]
    gen = client.generations.wait(client.videos.create(**request), timeout=60)
    gen.outputs[0].save(tmp_path / "out")
    with pytest.raises(mediagen.NotFoundError) as caught:
        client.generations.get("00000000-0000-4000-8000-000000000000")

    outside = [s for s in recorder.sent if not s.path.startswith("/v1/")]
    inside = [s for s in recorder.sent if s.path.startswith("/v1/")]
    assert {s.method for s in outside} == {"PUT", "GET"}  # the upload and the download
    assert not any(s.auth for s in outside)
    assert all(s.auth for s in inside)

    key = tenant.api_key
    assert key not in caplog.text
    assert key not in str(caught.value)
    assert key not in repr(caught.value)
    assert key not in repr(pickle.loads(pickle.dumps(caught.value)).__dict__)  # noqa: S301
    assert key not in (tmp_path / "journal.jsonl").read_text()
    for shown in (repr(client), repr(gen), repr(asset), repr(gen.outputs[0]), repr(vars(client))):
        assert key not in shown


def test_a_custom_http_client_with_default_auth_still_keeps_files_clean(
    sandbox, tenant, make_client, catalog
):
    import httpx

    recorder = Recorder()
    http = httpx.Client(
        headers={"Authorization": f"Bearer {tenant.api_key}"}, event_hooks=recorder.hooks()
    )
    client = make_client(http_client=http)
    gen = client.generations.wait(client.images.create(**example(catalog, "pixel-1")), timeout=30)
    assert gen.outputs[0].local_path is not None
    files = [s for s in recorder.sent if s.path.startswith("/files/")]
    assert files
    assert not any(s.auth for s in files)
    http.close()

"""Uploads against the real sandbox: exact headers, no key, expiry, 1 GiB in bounded memory."""

from __future__ import annotations

import datetime as dt
import io
import resource
import time
import tracemalloc

import pytest
from client_helpers import Recorder, make_sparse_wav

import mediagen

GIB = 1 << 30


def test_upload_a_path_bytes_or_a_file_object(client, media):
    from_path = client.uploads.upload(media["image"])
    data = media["image"].read_bytes()
    from_bytes = client.uploads.upload(data, filename="x.png")
    from_file = client.uploads.upload(io.BytesIO(data), content_type="image/png")
    for asset in (from_path, from_bytes, from_file):
        assert isinstance(asset, mediagen.Asset)
        assert asset.asset_id.startswith("asset_")
        assert asset.status == "ready"
        assert asset.size_bytes == len(data)
    assert len({from_path.asset_id, from_bytes.asset_id, from_file.asset_id}) == 3


def test_the_put_sends_exactly_the_required_headers_and_never_the_key(make_client, media):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    ticket = client.uploads.create(
        filename="ref.wav", content_type="audio/wav", size_bytes=media["audio"].stat().st_size
    )
    client.uploads.upload(media["audio"], ticket=ticket)
    put = next(s for s in recorder.sent if s.method == "PUT")
    assert not put.auth
    assert put.path.startswith("/files/")
    sent = {k.lower(): v for k, v in put.headers.items()}
    for name, value in ticket.required_headers.items():
        assert sent[name.lower()] == value
    register = next(s for s in recorder.sent if s.method == "POST")
    assert register.auth
    assert register.path == "/v1/uploads"


def test_a_ticket_that_expired_locally_is_registered_again(sandbox, make_client, media):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    size = media["image"].stat().st_size
    with sandbox.admin.config_changed(upload_url_ttl_seconds=1):
        ticket = client.uploads.create(filename="a.png", content_type="image/png", size_bytes=size)
    time.sleep(1.1)
    asset = client.uploads.upload(media["image"], ticket=ticket)
    assert asset.status == "ready"
    assert asset.asset_id != ticket.asset_id
    assert recorder.count("POST", "/v1/uploads") == 2


def test_a_url_the_service_says_expired_is_registered_again(sandbox, make_client, media):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    size = media["image"].stat().st_size
    with sandbox.admin.config_changed(upload_url_ttl_seconds=1):
        ticket = client.uploads.create(filename="a.png", content_type="image/png", size_bytes=size)
    time.sleep(1.1)
    # A clock that disagrees with the service's: the client thinks the ticket is still good.
    future = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=5)
    ticket.expires_at = future
    asset = client.uploads.upload(media["image"], ticket=ticket)
    assert asset.status == "ready"
    puts = [s.status for s in recorder.sent if s.method == "PUT"]
    assert puts == [403, 200]
    assert recorder.count("POST", "/v1/uploads") == 2


def test_bad_bytes_are_refused_with_the_service_422(client):
    with pytest.raises(mediagen.ValidationError) as caught:
        client.uploads.upload(b"not a png at all", filename="x.png")
    assert caught.value.status == 422
    assert caught.value.details


def test_a_1_gib_upload_streams_in_bounded_memory(client, tmp_path):
    path = make_sparse_wav(tmp_path / "long.wav", GIB)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    try:
        asset = client.uploads.upload(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    assert asset.status == "ready"
    assert asset.size_bytes == GIB
    assert peak < 32 * 1024**2, f"peak Python allocations {peak / 1024**2:.1f} MiB"
    assert rss_growth < 128 * 1024**2, f"peak RSS grew {rss_growth / 1024**2:.1f} MiB"

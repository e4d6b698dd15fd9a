"""A download that yields no media is an error, not a file; odd file names the server suggests
never make ``save()`` fail or put anything outside the target directory."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from client_faults import FakeServer, Reply

import mediagen
from mediagen.provenance._sidecar import sidecar_of
from process_helpers import sigint_default

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 200  # the bytes are not decoded: only kept or refused


class Files:
    """A file server whose routes a test changes: path -> Reply."""

    def __init__(self) -> None:
        self.routes: dict[str, Reply] = {}
        self.server = FakeServer(self.respond)

    def respond(self, request):
        return self.routes.get(request.path.split("?")[0], Reply(404, {}, b"no such file"))


@pytest.fixture
def files():
    found = Files()
    yield found
    found.server.close()


@pytest.fixture
def client(files, tmp_path):
    made = mediagen.Client(api_key="mg-test-key", base_url=files.server.url,
                           cache_dir=tmp_path / "cache", journal=False)  # fmt: skip
    yield made
    made.close()


def _generation(client, url: str, filename: str | None = "out.png", asset: str = "asset_1"):
    output = {"url": url, "asset_id": asset, "content_type": "image/png", "filename": filename}
    return mediagen.Generation.from_dict(
        {"id": "g-1", "type": "image", "status": "completed", "model": "pixel-1",
         "prompt": "p", "outputs": [output]},
        client=client,
    )  # fmt: skip


def _all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


BAD = {
    "redirect-to-empty": {
        "/out.png": Reply(302, {"Location": "/cdn/out.png"}),
        "/cdn/out.png": Reply(200, {}, b""),
    },
    "empty-without-type": {"/out.png": Reply(200, {}, b"")},
    "redirect-to-404": {
        "/out.png": Reply(302, {"Location": "/gone.png"}),
    },
    "redirect-to-a-page": {
        "/out.png": Reply(302, {"Location": "/login"}, b"moved"),
        "/login": Reply(200, {"Content-Type": "text/html"}, b"<html>sign in</html>"),
    },
}


@pytest.mark.parametrize("case", BAD)
def test_a_download_that_yields_no_media_is_an_error_and_never_cached(
    case, files, client, tmp_path
):
    files.routes = dict(BAD[case])
    gen = _generation(client, files.server.url + "/out.png?sig=abc")
    target = tmp_path / "saved"
    with pytest.raises((mediagen.DownloadError, mediagen.APIError)):
        client.save(gen, target)
    assert _all_files(tmp_path) == []  # no 0-byte file, no cache entry, no temporary file
    # Once the server serves the file, it is downloaded (nothing bad was cached).
    files.routes = {"/out.png": Reply(200, {"Content-Type": "image/png"}, PNG)}
    (path,) = client.save(gen, target)
    assert path.read_bytes() == PNG


def test_an_empty_cached_file_is_not_returned(files, client, tmp_path):
    gen = _generation(client, files.server.url + "/out.png?sig=abc")
    stale = client._cache.path_for(gen.outputs[0])
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")  # what an older version cached from an empty download
    files.routes = {"/out.png": Reply(200, {"Content-Type": "image/png"}, PNG)}
    assert gen.outputs[0].download().read_bytes() == PNG


def test_the_async_client_refuses_an_empty_download_too(files, tmp_path):
    files.routes = dict(BAD["redirect-to-empty"])

    async def main() -> None:
        async with mediagen.AsyncClient(
            api_key="mg-test-key",
            base_url=files.server.url,
            cache_dir=tmp_path / "cache",
            journal=False,
        ) as aclient:
            gen = _generation(aclient, files.server.url + "/out.png")
            await aclient.save(gen, tmp_path)

    with pytest.raises(mediagen.DownloadError):
        asyncio.run(main())
    assert _all_files(tmp_path) == []


# Names that broke save(): "." and ".." are directories, not files; 300 characters is over
# the file system's limit. (Paths, backslashes, "...", hidden and empty names were already
# reduced to a plain name.)
ODD_NAMES = [".", "..", "x" * 300 + ".png"]


@pytest.mark.parametrize("name", ODD_NAMES, ids=lambda n: repr(n)[:20])
def test_odd_server_file_names_stay_inside_the_target_directory(name, files, client, tmp_path):
    files.routes = {"/f": Reply(200, {"Content-Type": "image/png"}, PNG)}
    root = tmp_path / "work"
    target = root / "saved"
    target.mkdir(parents=True)
    gen = _generation(client, files.server.url + "/f?sig=1", filename=name)
    (path,) = client.save(gen, target)
    assert path.parent == target
    assert path.read_bytes() == PNG
    assert len(path.name) < 255
    # nothing next to it but its content credentials, nothing above it
    assert sorted(_all_files(root)) == sorted([path, sidecar_of(path)])
    assert not [p for p in os.listdir(target) if ".part-" in p]


SAVER = """
import sys
import mediagen
client = mediagen.Client(api_key="mg-test-key", base_url=sys.argv[1], cache_dir=sys.argv[2],
                         journal=False)
output = {"url": sys.argv[1] + "/stall.png", "asset_id": "asset_1", "content_type": "image/png"}
gen = mediagen.Generation.from_dict({"id": "g-1", "type": "image", "status": "completed",
                                     "model": "m", "prompt": "p", "outputs": [output]},
                                    client=client)
client.save(gen, sys.argv[3])
"""


def _stop_mid_download(process, cache: Path, hold: threading.Event, stop: int) -> None:
    """Send ``stop`` to the saving ``process`` once its download is under way (a partial file
    in ``cache``), and wait for it to end."""
    try:
        deadline = time.monotonic() + 60
        while not list(cache.rglob("*.part-*")) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert list(cache.rglob("*.part-*"))  # the download is under way, half written
        process.send_signal(stop)
        process.communicate(timeout=60)
    finally:
        hold.set()
        if process.poll() is None:
            process.kill()
            process.wait()


def test_an_interrupted_download_leaves_no_temporary_file(files, tmp_path):
    hold = threading.Event()
    headers = {"Content-Type": "image/png", "Content-Length": "100000"}  # more than is sent
    files.routes = {"/stall.png": Reply(200, headers, PNG, hold)}
    cache = tmp_path / "cache"
    args = [files.server.url, str(cache), str(tmp_path / "saved")]
    process = subprocess.Popen(
        [sys.executable, "-c", SAVER, *args], stderr=subprocess.PIPE, preexec_fn=sigint_default
    )
    _stop_mid_download(process, cache, hold, signal.SIGINT)
    assert process.returncode != 0
    assert _all_files(tmp_path) == []


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_a_download_killed_mid_file_leaves_nothing_once_the_cache_is_used_again(
    files, tmp_path, stop
):
    """A killed process runs no cleanup, so its partial file stays until the next download
    into that directory, which removes what dead processes left and keeps the new file."""
    hold = threading.Event()
    headers = {"Content-Type": "image/png", "Content-Length": "100000"}  # more than is sent
    files.routes = {
        "/stall.png": Reply(200, headers, PNG, hold),
        "/f": Reply(200, {"Content-Type": "image/png"}, PNG),
    }
    cache = tmp_path / "cache"
    args = [files.server.url, str(cache), str(tmp_path / "saved")]
    process = subprocess.Popen([sys.executable, "-c", SAVER, *args], stderr=subprocess.PIPE)
    _stop_mid_download(process, cache, hold, stop)
    assert process.returncode == -stop
    with mediagen.Client(api_key="mg-test-key", base_url=files.server.url, cache_dir=cache,
                         journal=False) as client:  # fmt: skip
        gen = _generation(client, files.server.url + "/f?sig=1")
        (path,) = client.save(gen, tmp_path / "saved")
    assert path.read_bytes() == PNG
    assert not list(tmp_path.rglob("*.part-*"))

"""A download inside ``wait(timeout=...)``, ``save(timeout=...)`` or ``download(timeout=...)``
ends by that deadline, even when the file server keeps sending a byte every half second (no
read ever times out): the call raises its timeout error within the deadline plus a small margin
and leaves no partial file."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
import pytest
from client_faults import FakeServer, Reply, timed

import mediagen

GENERATION_ID = "00000000-0000-4000-8000-0000000000d1"
TIMEOUT = 2.0
#: the call must end within this much of its deadline (one trickled byte is 0.5 s)
MARGIN = 1.5
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 400  # 200 s at a byte every 0.5 s


def _generation_body(url: str) -> dict:
    return {
        "id": GENERATION_ID,
        "type": "image",
        "status": "completed",
        "model": "pixel-1",
        "prompt": "a lighthouse",
        "created_at": "2026-01-01T00:00:00Z",
        "completed_at": "2026-01-01T00:00:01Z",
        "credits_charged": 1,
        "outputs": [
            {"url": url, "asset_id": "asset_slow", "content_type": "image/png"},
        ],
    }


class SlowFiles:
    """A service whose one generation is completed and whose output trickles in."""

    def __init__(self) -> None:
        self.server = FakeServer(self.respond)
        self.output_url = self.server.url + "/files/slow.png?sig=abc"
        self.pause = 0.5  # between two bytes of the output

    def respond(self, request):
        path = request.path.split("?")[0]
        if path == f"/v1/generations/{GENERATION_ID}":
            body = json.dumps(_generation_body(self.output_url)).encode()
            return Reply(200, {"Content-Type": "application/json"}, body)
        if path == "/files/slow.png":
            headers = {"Content-Type": "image/png", "Content-Length": str(len(PNG))}
            return Reply(200, headers, PNG, trickle=self.pause)
        return Reply(404, {"Content-Type": "application/json"}, b'{"error": {}}')


@pytest.fixture
def slow():
    found = SlowFiles()
    yield found
    found.server.close()


def _timed(call) -> tuple[float, BaseException | None, bool]:
    return timed(call, TIMEOUT + MARGIN + 10)  # an unbounded download is still running then


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _options(slow: SlowFiles, tmp_path: Path) -> dict:
    return {"api_key": "mg-test-key", "base_url": slow.server.url, "journal": False,
            "cache_dir": tmp_path / "cache", "poll_interval": (0.05, 0.1)}  # fmt: skip


def _check_ended_by_deadline(slow, tmp_path, took, error, ended, expected) -> None:
    assert ended, "the call was still downloading long after its timeout"
    assert isinstance(error, expected), error
    assert took < TIMEOUT + MARGIN
    assert any(r.path.startswith("/files/slow.png") for r in slow.server.seen)  # it did start
    assert _files(tmp_path) == []  # no partial file, in the cache or the target


def test_wait_ends_by_its_timeout_while_an_output_trickles_in(slow, tmp_path):
    with mediagen.Client(**_options(slow, tmp_path)) as client:
        took, error, ended = _timed(lambda: client.generations.wait(GENERATION_ID, timeout=TIMEOUT))
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.WaitTimeoutError)
    assert "completed, but its outputs were not downloaded" in str(error)


def test_the_async_wait_ends_by_its_timeout_too(slow, tmp_path):
    async def main() -> None:
        async with mediagen.AsyncClient(**_options(slow, tmp_path)) as client:
            await client.generations.wait(GENERATION_ID, timeout=TIMEOUT)

    took, error, ended = _timed(lambda: asyncio.run(main()))
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.WaitTimeoutError)


def test_a_read_still_waiting_at_the_deadline_is_cut_then(slow, tmp_path):
    """A byte just before each read would time out: every read succeeds, and the one in
    progress at the deadline would otherwise run almost a whole read timeout past it."""
    slow.pause = TIMEOUT * 0.9
    with mediagen.Client(**_options(slow, tmp_path)) as client:
        gen = mediagen.Generation.from_dict(_generation_body(slow.output_url), client=client)
        took, error, ended = _timed(lambda: gen.save(tmp_path / "saved", timeout=TIMEOUT))
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.APITimeoutError)


def test_save_ends_by_its_timeout(slow, tmp_path):
    with mediagen.Client(**_options(slow, tmp_path)) as client:
        gen = mediagen.Generation.from_dict(_generation_body(slow.output_url), client=client)
        took, error, ended = _timed(lambda: gen.save(tmp_path / "saved", timeout=TIMEOUT))
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.APITimeoutError)
    assert "deadline" in str(error)


def test_the_async_save_ends_by_its_timeout(slow, tmp_path):
    async def main() -> None:
        async with mediagen.AsyncClient(**_options(slow, tmp_path)) as client:
            gen = mediagen.Generation.from_dict(_generation_body(slow.output_url), client=client)
            await client.save(gen, tmp_path / "saved", timeout=TIMEOUT)

    took, error, ended = _timed(lambda: asyncio.run(main()))
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.APITimeoutError)


@pytest.mark.parametrize("method", ["download", "save"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_one_outputs_download_and_save_end_by_their_timeout(slow, tmp_path, method, asynchronous):
    if asynchronous:

        async def main() -> None:
            async with mediagen.AsyncClient(**_options(slow, tmp_path)) as client:
                gen = mediagen.Generation.from_dict(
                    _generation_body(slow.output_url), client=client
                )
                await getattr(gen.outputs[0], method)(tmp_path / "saved", timeout=TIMEOUT)

        took, error, ended = _timed(lambda: asyncio.run(main()))
    else:
        with mediagen.Client(**_options(slow, tmp_path)) as client:
            gen = mediagen.Generation.from_dict(_generation_body(slow.output_url), client=client)
            output = gen.outputs[0]
            took, error, ended = _timed(
                lambda: getattr(output, method)(tmp_path / "saved", timeout=TIMEOUT)
            )
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.APITimeoutError)
    assert "within its 2 s deadline" in str(error)


@pytest.mark.parametrize("method", ["download", "save"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_without_a_timeout_a_download_ends_by_the_clients_timeout(
    slow, tmp_path, method, asynchronous
):
    """No ``timeout=`` on the call: the client's ``timeout`` bounds the whole download, so a
    server sending a byte every half second cannot hold it (or a table run) for ever."""
    options = {**_options(slow, tmp_path), "timeout": TIMEOUT}
    if asynchronous:

        async def main() -> None:
            async with mediagen.AsyncClient(**options) as client:
                gen = mediagen.Generation.from_dict(
                    _generation_body(slow.output_url), client=client
                )
                await getattr(gen.outputs[0], method)(tmp_path / "saved")

        took, error, ended = _timed(lambda: asyncio.run(main()))
    else:
        with mediagen.Client(**options) as client:
            gen = mediagen.Generation.from_dict(_generation_body(slow.output_url), client=client)
            output = gen.outputs[0]
            took, error, ended = _timed(lambda: getattr(output, method)(tmp_path / "saved"))
    _check_ended_by_deadline(slow, tmp_path, took, error, ended, mediagen.APITimeoutError)


def test_refresh_ends_by_its_timeout_when_the_service_hangs(tmp_path):
    from client_faults import SilentServer

    with (
        SilentServer() as silent,
        mediagen.Client(
            api_key="mg-test-key", base_url=silent.url, cache_dir=tmp_path, journal=False
        ) as client,
    ):
        gen = mediagen.Generation.from_dict(_generation_body("http://unused/x.png"), client=client)
        took, error, ended = _timed(lambda: gen.refresh(timeout=TIMEOUT))
    assert ended
    assert isinstance(error, mediagen.APITimeoutError), error
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN


def test_a_save_with_time_to_spare_keeps_the_whole_file(sandbox, tenant, tmp_path):
    options = {"journal": False, "cache_dir": tmp_path / "cache", "poll_interval": (0.05, 0.1)}
    with mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, **options) as client:
        gen = client.images.create(model="pixel-1", prompt="a lighthouse").wait(download=False)
        (path,) = gen.save(tmp_path / "saved", timeout=30)
    assert path.parent == tmp_path / "saved"
    assert path.read_bytes().startswith(b"\x89PNG")


def test_downloads_start_no_thread_each(sandbox, tenant, tmp_path):
    """The deadline of a blocking download is kept by one thread of the process, not by a
    thread started (and ended) per download: on CPython 3.11 before 3.11.9, starting a thread
    can deadlock the whole process against ``sys._current_frames()``, which a Dask worker's
    profiler calls every few milliseconds, and a table run makes a download per row."""
    import threading

    options = {"journal": False, "cache_dir": tmp_path / "cache", "poll_interval": (0.05, 0.1)}
    started: set[str] = set()

    def note(frame, event, arg):  # runs in each thread the threading module starts
        started.add(threading.current_thread().name)
        sys.setprofile(None)

    with mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, **options) as client:
        gens = [
            client.images.create(model="pixel-1", prompt=f"a lighthouse {n}").wait(download=False)
            for n in range(6)
        ]
        gens[0].save(tmp_path / "first")  # the process's deadline thread, if not started yet
        threading.setprofile(note)
        try:
            paths = [path for gen in gens[1:] for path in gen.save(tmp_path / "saved")]
        finally:
            threading.setprofile(None)  # type: ignore[arg-type]
    assert len(paths) == 5
    assert all(path.read_bytes().startswith(b"\x89PNG") for path in paths)
    assert started == set(), f"threads started by 5 downloads: {sorted(started)}"


class TrickledHeads(SlowFiles):
    """A service that sends the status line and headers of its answers a byte every 0.1 s:
    every read gets a byte in time, and a head of some 300 bytes takes half a minute."""

    def __init__(self, api: bool) -> None:
        super().__init__()
        self.api = api

    def respond(self, request):
        reply = super().respond(request)
        path = request.path.split("?")[0]
        if reply is not None and (path == "/files/slow.png" or self.api):
            padded = {**reply.headers, "X-Pad": "a" * 200}
            return Reply(reply.status, padded, PNG[:8], trickle_head=0.1)
        return reply


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_file_server_trickling_its_headers_cannot_hold_a_save(tmp_path, asynchronous):
    """The deadline bounds the whole exchange, the wait for the answer's head included, not
    only the body: without it a blocking save with ``timeout=2`` was held for 27 s."""
    heads = TrickledHeads(api=False)
    try:
        if asynchronous:

            async def main() -> None:
                async with mediagen.AsyncClient(**_options(heads, tmp_path)) as client:
                    gen = mediagen.Generation.from_dict(
                        _generation_body(heads.output_url), client=client
                    )
                    await client.save(gen, tmp_path / "saved", timeout=TIMEOUT)

            took, error, ended = _timed(lambda: asyncio.run(main()))
        else:
            with mediagen.Client(**_options(heads, tmp_path)) as client:
                gen = mediagen.Generation.from_dict(
                    _generation_body(heads.output_url), client=client
                )
                took, error, ended = _timed(lambda: gen.save(tmp_path / "saved", timeout=TIMEOUT))
        _check_ended_by_deadline(heads, tmp_path, took, error, ended, mediagen.APITimeoutError)
    finally:
        heads.server.close()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_an_api_answer_trickling_its_headers_cannot_hold_a_call(tmp_path, asynchronous):
    """No ``timeout=`` on the call: the client's ``timeout`` bounds it, head and all."""
    heads = TrickledHeads(api=True)
    options = {**_options(heads, tmp_path), "timeout": TIMEOUT, "max_retries": 0}
    try:
        if asynchronous:

            async def main() -> None:
                async with mediagen.AsyncClient(**options) as client:
                    await client.generations.get(GENERATION_ID)

            took, error, ended = _timed(lambda: asyncio.run(main()))
        else:
            with mediagen.Client(**options) as client:
                took, error, ended = _timed(lambda: client.generations.get(GENERATION_ID))
        assert ended, "the call was still reading the answer's head long after its timeout"
        assert isinstance(error, mediagen.APITimeoutError), error
        assert took < TIMEOUT + MARGIN
    finally:
        heads.server.close()


def test_every_transport_of_the_http_client_a_client_builds_is_bounded(monkeypatch):
    """The head's bound reaches into httpx's pools, which have no public way in: an httpx
    whose pools moved fails here rather than silently losing the bound (the environment's
    proxies get a transport each, and are bounded too)."""
    from mediagen.client._drivers import bound_blocking_reads

    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    with httpx.Client() as http:
        assert len(http._mounts) >= 1  # the proxy's own transport
        assert bound_blocking_reads(http)

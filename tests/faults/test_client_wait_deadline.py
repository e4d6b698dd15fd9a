"""``wait(timeout=...)`` is a deadline: a hung service cannot hold it past its time, and an
outage shorter than the time left is ridden out instead of ending the wait."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time

import pytest
from client_faults import FakeServer, Relay, Reply, SilentServer, timed

import mediagen

GENERATION_ID = "00000000-0000-4000-8000-000000000000"
TIMEOUT = 2.0
#: the wait must end within this much of its timeout (a deadline, not a speed figure)
MARGIN = 2.0


def _timed(call) -> tuple[float, BaseException | None, bool]:
    return timed(call, TIMEOUT + MARGIN + 10)  # an old, unbounded wait is still blocked then


@pytest.mark.parametrize("client_timeout", [None, 3.0, 0.5])
def test_wait_ends_by_its_timeout_when_the_service_never_answers(tmp_path, client_timeout):
    with SilentServer() as silent:
        client = mediagen.Client(
            api_key="mg-test-key", base_url=silent.url, timeout=client_timeout,
            cache_dir=tmp_path, journal=False,
        )  # fmt: skip
        took, error, ended = _timed(lambda: client.generations.wait(GENERATION_ID, timeout=TIMEOUT))
        client.close()
        assert silent.accepted  # the request really reached a server that then said nothing
    assert ended, "wait() was still blocked long after its timeout"
    assert isinstance(error, mediagen.WaitTimeoutError), error
    assert GENERATION_ID in str(error)
    assert took < TIMEOUT + MARGIN


@pytest.mark.parametrize("client_timeout", [None, 0.5])
def test_the_async_wait_ends_by_its_timeout_too(tmp_path, client_timeout):
    """With a client timeout shorter than the wait's, each hung poll times out and is retried
    until the wait's own deadline, which ends it (not the first poll's timeout)."""

    async def main(url: str) -> None:
        async with mediagen.AsyncClient(
            api_key="mg-test-key", base_url=url, cache_dir=tmp_path, journal=False,
            timeout=client_timeout,
        ) as client:  # fmt: skip
            await client.generations.wait(GENERATION_ID, timeout=TIMEOUT)

    with SilentServer() as silent:
        took, error, ended = _timed(lambda: asyncio.run(main(silent.url)))
    assert ended
    assert isinstance(error, mediagen.WaitTimeoutError), error
    assert took >= TIMEOUT * 0.9
    assert took < TIMEOUT + MARGIN


class _RetryLog(logging.Handler):
    """Counts the client's "retry in" log lines (each one a failed attempt it will repeat)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.retries = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "retry in" in record.getMessage():
            self.retries += 1


@pytest.fixture
def retry_log():
    handler = _RetryLog()
    logger = logging.getLogger("mediagen")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def _wait_for(condition, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_wait_rides_out_an_outage_until_the_service_is_back(sandbox, tenant, tmp_path, retry_log):
    direct = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, journal=False,
                             cache_dir=tmp_path / "direct")  # fmt: skip
    gen = direct.images.create(model="pixel-1", prompt="a slow lighthouse [[slow:1]]")
    relay = Relay(sandbox.base_url)
    client = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                             journal=False, poll_interval=(0.1, 0.2))  # fmt: skip
    relay.down()
    result: dict = {}

    def run() -> None:
        try:
            result["gen"] = client.generations.wait(gen.id, timeout=60)
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        # More failed attempts than the default retries allow (3): an old wait gave up here.
        limit = 3
        assert _wait_for(lambda: retry_log.retries > limit + 1 or not thread.is_alive(), 45)
        assert thread.is_alive(), f"the wait gave up during the outage: {result.get('error')!r}"
        relay.up()
        thread.join(60)
    finally:
        relay.close()
        client.close()
        direct.close()
    assert "error" not in result, result.get("error")
    assert result["gen"].status == "completed"
    assert result["gen"].id == gen.id


def test_an_outage_longer_than_the_timeout_ends_as_a_wait_timeout(sandbox, tenant, tmp_path):
    direct = mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, journal=False,
                             cache_dir=tmp_path / "direct")  # fmt: skip
    gen = direct.images.create(model="pixel-1", prompt="a lighthouse [[slow:30]]")
    relay = Relay(sandbox.base_url)
    relay.down()
    client = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                             journal=False)  # fmt: skip
    timeout = 5.0
    try:
        took, error, ended = _timed(lambda: client.generations.wait(gen.id, timeout=timeout))
    finally:
        relay.close()
        client.close()
        direct.close()
    assert ended
    # Not a connection error a few seconds in: the wait kept trying until its deadline.
    assert isinstance(error, mediagen.WaitTimeoutError), error
    assert "nothing was resubmitted" in str(error)
    assert took >= timeout * 0.9
    assert took < timeout + MARGIN


def test_the_wait_deadline_covers_downloading_the_outputs(tmp_path):
    """A completed job whose file server hangs: the wait still ends by its timeout."""
    with SilentServer() as files:
        output = {"url": f"{files.url}/files/out.png?sig=1", "asset_id": "asset_1",
                  "content_type": "image/png"}  # fmt: skip
        done = {"id": GENERATION_ID, "type": "image", "status": "completed", "model": "m",
                "prompt": "p", "created_at": "2026-01-01T00:00:00Z",
                "outputs": [output]}  # fmt: skip
        body = json.dumps(done).encode()
        api = FakeServer(lambda r: Reply(200, {"Content-Type": "application/json"}, body))
        client = mediagen.Client(api_key="mg-test-key", base_url=api.url, cache_dir=tmp_path,
                                 journal=False)  # fmt: skip
        try:
            took, error, ended = _timed(
                lambda: client.generations.wait(GENERATION_ID, timeout=TIMEOUT)
            )
        finally:
            client.close()
            api.close()
        assert files.accepted  # the download was really attempted
    assert ended
    assert isinstance(error, mediagen.WaitTimeoutError), error
    assert "completed" in str(error)
    assert took < TIMEOUT + MARGIN
    assert not list(tmp_path.rglob("*.part-*"))

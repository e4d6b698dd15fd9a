"""A call's ``timeout=`` is one deadline for everything it sends: attempts, backoff and pauses.

Real loopback servers that keep answering 503 (with a ``Retry-After`` the policy would honour
for longer than the call has) or never answer at all; a submit whose answer is held past its
deadline reports its idempotency key, and sending it again charges nothing more.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading

import pytest
from client_faults import (
    FakeServer,
    Relay,
    Reply,
    SilentServer,
    example_request,
    reserves,
    submits,
    timed,
)

import mediagen

TIMEOUT = 2.0
#: the call must end within this much of its deadline (a deadline, not a speed figure)
MARGIN = 1.5
UNAVAILABLE = Reply(
    503,
    {"Content-Type": "application/json", "Retry-After": "1"},
    b'{"error": {"code": "internal_error", "message": "down for maintenance", '
    b'"details": null, "trace_id": null}}',
)


def _timed(call) -> tuple[float, BaseException | None]:
    """Run ``call`` on a thread; (seconds taken, what it raised). An unbounded call fails here
    instead of hanging the suite."""
    took, error, ended = timed(call, TIMEOUT + MARGIN + 20)
    assert ended, "the call was still running long after its deadline"
    return took, error


def _credits(url: str, tmp_path, asynchronous: bool, call_timeout: float | None, **options):
    """``credits.get(timeout=call_timeout)`` from a Client or an AsyncClient on ``url``."""
    settings = {"api_key": "mg-test-key", "base_url": url, "cache_dir": tmp_path,
                "journal": False, "max_retries": 50, **options}  # fmt: skip
    kwargs = {} if call_timeout is None else {"timeout": call_timeout}

    def blocking() -> None:
        with mediagen.Client(**settings) as client:
            client.credits.get(**kwargs)

    async def awaited() -> None:
        async with mediagen.AsyncClient(**settings) as client:
            await client.credits.get(**kwargs)

    return (lambda: asyncio.run(awaited())) if asynchronous else blocking


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_credits_get_ends_by_its_timeout_while_the_service_answers_503(tmp_path, asynchronous):
    with FakeServer(lambda request: UNAVAILABLE) as server:
        # 50 retries allowed: only the deadline can end this call in time
        took, error = _timed(_credits(server.url, tmp_path, asynchronous, TIMEOUT))
        tries = len(server.seen)
    assert isinstance(error, mediagen.APITimeoutError), error
    assert "GET /v1/credits got no answer within its 2 s deadline" in str(error)
    assert "last: HTTP 503" in str(error)
    assert tries > 1  # it did retry inside the deadline
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN


def test_a_deadline_shorter_than_retry_after_still_holds_the_key_for_all_of_it(tmp_path):
    """A 429 asking for 30 s ends a 2 s call at 2 s, but the key's other requests still wait
    the service's 30 s rather than what was left of that call."""
    busy = Reply(
        429,
        {"Content-Type": "application/json", "Retry-After": "30"},
        b'{"error": {"code": "rate_limited", "message": "retry in 30 s", "details": null, '
        b'"trace_id": null}}',
    )
    with FakeServer(lambda request: busy) as server:
        client = mediagen.Client(api_key="mg-test-key-429", base_url=server.url,
                                 cache_dir=tmp_path, journal=False)  # fmt: skip
        try:
            took, error = _timed(lambda: client.credits.get(timeout=TIMEOUT))
            held_for = client._gate.blocked_for
        finally:
            client.close()
    assert isinstance(error, mediagen.APITimeoutError), error
    assert "last: HTTP 429" in str(error)
    assert took < TIMEOUT + MARGIN
    assert held_for > 20


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_credits_get_ends_by_its_timeout_when_the_service_hangs(tmp_path, asynchronous):
    with SilentServer() as silent:
        took, error = _timed(_credits(silent.url, tmp_path, asynchronous, TIMEOUT))
        assert silent.accepted  # the request reached a server that then said nothing
    assert isinstance(error, mediagen.APITimeoutError), error
    assert "2 s deadline" in str(error)
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_the_clients_timeout_is_every_requests_deadline(tmp_path, asynchronous):
    """``Client(timeout=2)``: not 2 s per attempt (four hung attempts and their backoff) but
    2 s for the request."""
    with SilentServer() as silent:
        call = _credits(silent.url, tmp_path, asynchronous, None, timeout=TIMEOUT, max_retries=3)
        took, error = _timed(call)
    assert isinstance(error, mediagen.APITimeoutError), error
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN


def test_a_submit_past_its_deadline_reports_its_key_and_is_charged_once(sandbox, tenant, tmp_path):
    """The service takes the submit and reserves its price, but the answer is held past the
    call's deadline: the error names the idempotency key, and the same call made again gets the
    original job back instead of a second one."""
    release = threading.Event()
    relay = Relay(sandbox.base_url)
    forward = relay.respond

    def held(request):
        answer = forward(request)
        if submits(request):
            release.wait(30)  # the job exists; its answer is late
        return answer

    relay.respond = held
    client = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path)
    request = example_request(sandbox, tenant, "pixel-1")
    try:
        client.models.get("pixel-1")  # the catalog entry is cached: only the POST is timed
        took, error = _timed(lambda: client.images.create(**request, timeout=TIMEOUT))
        release.set()
        assert isinstance(error, mediagen.APITimeoutError), error
        assert error.idempotency_key
        assert error.idempotency_key in str(error)
        assert len(reserves(sandbox, tenant.org_id)) == 1  # the service did take it
        again = client.images.create(**request)
    finally:
        release.set()
        client.close()
        relay.close()
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN
    assert again.idempotency_key == error.idempotency_key
    assert len(reserves(sandbox, tenant.org_id)) == 1  # charged once


def _hung_put_service() -> tuple[FakeServer, threading.Event]:
    """A service whose upload registration answers at once and whose signed upload URL (on
    the same server) takes the bytes and then never answers until released."""
    release = threading.Event()

    def respond(request):
        if request.method == "POST" and request.path.startswith("/v1/uploads"):
            server_url = f"http://{request.headers['Host']}"
            ticket = {
                "asset_id": "asset-hung",
                "upload_url": f"{server_url}/files/uploads/asset-hung",
                "required_headers": {"Content-Type": "image/png"},
                "status": "pending",
            }
            return Reply(201, {"Content-Type": "application/json"}, json.dumps(ticket).encode())
        release.wait(30)  # the PUT: never answered within the call
        return Reply(200, {"Content-Type": "application/json"}, b'{"status": "ready"}')

    return FakeServer(respond), release


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("source", ["bytes", "path"])
def test_an_upload_ends_by_its_timeout_when_the_signed_url_never_answers(
    tmp_path, asynchronous, source
):
    png = b"\x89PNG\r\n\x1a\n" + bytes(4096)
    path = tmp_path / "frame.png"
    path.write_bytes(png)
    what = png if source == "bytes" else path
    settings = {"api_key": "mg-test-key", "cache_dir": tmp_path, "journal": False}
    server, release = _hung_put_service()

    def blocking() -> None:
        with mediagen.Client(base_url=server.url, **settings) as client:
            client.uploads.upload(what, filename="frame.png", timeout=TIMEOUT)

    async def awaited() -> None:
        async with mediagen.AsyncClient(base_url=server.url, **settings) as client:
            await client.uploads.upload(what, filename="frame.png", timeout=TIMEOUT)

    try:
        took, error = _timed((lambda: asyncio.run(awaited())) if asynchronous else blocking)
        puts = [r for r in server.seen if r.method == "PUT"]
    finally:
        release.set()
        server.down()
    assert puts, "the bytes were sent to the signed URL"
    assert isinstance(error, mediagen.APITimeoutError), error
    assert str(error).startswith("PUT http://"), error
    # the PUT had what the call's 2 s left it after the POST before it: to a tenth, 2 s on a
    # quiet machine, a little less on a loaded one
    said = re.search(r"/files/uploads/asset-hung got no answer within its ([\d.]+) s deadline",
                     str(error))  # fmt: skip
    assert said, error
    assert TIMEOUT * 0.75 <= float(said.group(1)) <= TIMEOUT
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN


CALLS_ON_A_HUNG_SERVICE = {
    "generations.list": lambda c: list(c.generations.list(timeout=TIMEOUT)),
    "models.estimate_many": lambda c: c.models.estimate_many(
        [{"model": "pixel-1", "prompt": "a fox"}], timeout=TIMEOUT
    ),
}


@pytest.mark.parametrize("call", list(CALLS_ON_A_HUNG_SERVICE))
def test_every_call_ends_by_its_timeout_when_the_service_hangs(tmp_path, call):
    with SilentServer() as silent:
        client = mediagen.Client(
            api_key="mg-test-key", base_url=silent.url, cache_dir=tmp_path, journal=False
        )
        try:
            took, error = _timed(lambda: CALLS_ON_A_HUNG_SERVICE[call](client))
        finally:
            client.close()
    assert isinstance(error, mediagen.APITimeoutError), error
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN


@pytest.mark.parametrize("call", ["recover", "resume"])
def test_recover_and_resume_end_by_their_timeout_when_the_service_hangs(
    sandbox, tenant, tmp_path, call
):
    """A journaled job (resume) and a lost submit (recover) need the service; it hangs: the
    call ends at its deadline, and the journal still holds both for the next try."""
    lost, hung = threading.Event(), threading.Event()
    relay = Relay(sandbox.base_url, drop=lambda request: submits(request) and lost.is_set())
    forward = relay.respond

    def maybe_hung(request):
        if hung.is_set():
            threading.Event().wait(30)  # the service never answers from here on
            return None
        return forward(request)

    relay.respond = maybe_hung
    client = mediagen.Client(api_key=tenant.api_key, base_url=relay.url, cache_dir=tmp_path,
                             max_retries=1)  # fmt: skip
    request = example_request(sandbox, tenant, "pixel-1")
    try:
        pending = client.images.create(**{**request, "prompt": "a slow fox [[slow:30]]"})
        lost.set()
        with pytest.raises(mediagen.APIConnectionError) as unanswered:
            client.images.create(**{**request, "prompt": "a lost fox"})
        hung.set()
        took, error = _timed(lambda: getattr(client.generations, call)(timeout=TIMEOUT))
        journaled = client.generations.pending()
    finally:
        client.close()
        relay.close()
    assert isinstance(error, mediagen.APITimeoutError), error
    assert TIMEOUT * 0.9 <= took < TIMEOUT + MARGIN
    assert pending.id in {r.get("generation_id") for r in journaled}, "kept for the next try"
    assert unanswered.value.idempotency_key in {r.get("idempotency_key") for r in journaled}

"""A server or proxy that echoes the request's headers in an error body never makes the client
show the key: not in a message, a repr, a traceback, a log line, the journal or a pickle."""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import traceback

import pytest
from client_faults import FakeServer, Reply

import mediagen

KEY = "mgk_live_7f3a9c2e5b8d41f6a0c3e9b2d7f18a64"


def _json_500(request):
    auth = request.headers.get("Authorization", "")
    body = {
        "error": {
            "code": "internal_error",
            "message": f"upstream refused the request with headers {request.headers!r}",
            "details": [{"loc": ["header", "authorization"], "msg": auth, "type": "echo"}],
            "trace_id": "trace_0123456789abcdef",
        },
        "request": {"headers": request.headers},
    }
    return Reply(500, {"Content-Type": "application/json"}, json.dumps(body).encode())


def _text_502(request):
    lines = "\n".join(f"{k}: {v}" for k, v in request.headers.items())
    return Reply(502, {"Content-Type": "text/plain"}, f"Bad gateway. You sent:\n{lines}".encode())


def _shown(error: BaseException) -> str:
    """Every text a user or a log could get from the exception."""
    parts = [str(error), repr(error), "".join(traceback.format_exception(error))]
    parts += [repr(vars(error)), repr(pickle.loads(pickle.dumps(error)).__dict__)]  # noqa: S301
    return "\n".join(parts)


@pytest.mark.parametrize("respond", [_json_500, _text_502], ids=["json-500", "text-502"])
def test_an_echoed_authorization_header_is_masked_everywhere(respond, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    journal = tmp_path / "journal.jsonl"
    with FakeServer(respond) as server:
        client = mediagen.Client(api_key=KEY, base_url=server.url, cache_dir=tmp_path,
                                 journal=journal, max_retries=1)  # fmt: skip
        with pytest.raises(mediagen.ServerError) as read:
            client.credits.get()
        with pytest.raises(mediagen.APIError) as submitted:
            client.images.create(model="pixel-1", prompt="a lighthouse", validate=False)
        client.close()
        echoed = [r for r in server.seen if KEY in r.headers.get("Authorization", "")]
    assert echoed  # the server really had the key to echo
    for caught in (read, submitted):
        shown = _shown(caught.value)
        assert KEY not in shown
        assert "***" in shown  # masked, not silently dropped: the reader sees something was
    assert KEY not in caplog.text
    assert KEY not in journal.read_text()


def test_the_async_client_masks_it_too(tmp_path):
    async def main(url: str) -> None:
        async with mediagen.AsyncClient(api_key=KEY, base_url=url, cache_dir=tmp_path,
                                        journal=False, max_retries=0) as client:  # fmt: skip
            await client.credits.get()

    with FakeServer(_json_500) as server, pytest.raises(mediagen.ServerError) as caught:
        asyncio.run(main(server.url))
    assert KEY not in _shown(caught.value)


def test_an_http_client_with_an_auth_flow_never_sends_the_key_to_file_urls(tmp_path):
    """``httpx.Client(auth=...)`` adds credentials when a request is sent, after the client
    removed them: the file URLs must opt out of it too."""

    def respond(request):
        if request.path.startswith("/v1/generations/"):
            output = {"url": f"{server.url}/files/out.png?sig=1", "asset_id": "asset_1",
                      "content_type": "image/png"}  # fmt: skip
            gen = {"id": "g-1", "type": "image", "status": "completed", "model": "m",
                   "prompt": "p", "created_at": "2026-01-01T00:00:00Z",
                   "outputs": [output]}  # fmt: skip
            return Reply(200, {"Content-Type": "application/json"}, json.dumps(gen).encode())
        return Reply(200, {"Content-Type": "image/png"}, b"\x89PNG" + b"\x00" * 64)

    def bearer(request):
        request.headers["Authorization"] = f"Bearer {KEY}"
        return request

    server = FakeServer(respond)
    http = __import__("httpx").Client(auth=bearer, timeout=30)
    client = mediagen.Client(api_key=KEY, base_url=server.url, http_client=http,
                             cache_dir=tmp_path, journal=False)  # fmt: skip
    try:
        gen = client.generations.wait("g-1", timeout=30)
    finally:
        http.close()
        server.close()
    assert gen.outputs[0].local_path is not None
    files = [r for r in server.seen if r.path.startswith("/files/")]
    assert files
    assert not [r for r in files if "Authorization" in r.headers]


@pytest.mark.parametrize("pasted", [f"{KEY[:20]}\n{KEY[20:]}", f"{KEY[:20]} {KEY[20:]}"])
def test_a_badly_pasted_key_is_refused_without_showing_it(pasted, tmp_path):
    """A line break inside the key made every request fail with a protocol error quoting the
    Authorization header, key included."""
    with FakeServer(lambda r: Reply(200, {"Content-Type": "application/json"}, b"{}")) as server:
        try:
            client = mediagen.Client(api_key=pasted, base_url=server.url, cache_dir=tmp_path,
                                     journal=False, max_retries=0)  # fmt: skip
            client.credits.get()
        except Exception as exc:
            shown = "".join(traceback.format_exception(exc))
        else:
            shown = ""
    assert "cannot be sent in a header" in shown
    assert KEY[:20] not in shown
    assert KEY[20:] not in shown


def test_credentials_in_the_base_url_stay_out_of_reprs_and_the_journal(tmp_path):
    journal = tmp_path / "journal.jsonl"
    with FakeServer(_json_500) as server:
        url = server.url.replace("http://", "http://proxyuser:proxy-pass-8841@")
        client = mediagen.Client(api_key=KEY, base_url=url, cache_dir=tmp_path,
                                 journal=journal, max_retries=0)  # fmt: skip
        with pytest.raises(mediagen.APIError) as caught:
            client.images.create(model="pixel-1", prompt="a lighthouse", validate=False)
        client.close()
    for shown in (repr(client), _shown(caught.value), journal.read_text()):
        assert "proxy-pass-8841" not in shown

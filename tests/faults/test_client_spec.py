"""Where the client strayed from the spec: it read numbers and decisions out of
``error.message`` ("not meant for parsing"), and the widgets polled faster than 2 to 5 s."""

from __future__ import annotations

import asyncio
import json

import pytest
from client_faults import FakeServer, Relay, Reply, example_request, submits

import mediagen


def test_a_402_reports_required_and_available_whatever_its_message_says(
    sandbox, tenant_factory, tmp_path
):
    poor = tenant_factory(balance=3)
    relay = Relay(sandbox.base_url)
    forward = relay.respond

    def reworded(request):  # a service is free to word its messages as it likes
        answer = forward(request)
        if submits(request) and answer is not None and answer.status == 402:
            body = json.loads(answer.body)
            body["error"]["message"] = "Ihr Guthaben reicht dafür nicht aus."
            del body["error"]["required_credits"], body["error"]["available_credits"]
            answer = Reply(402, answer.headers, json.dumps(body).encode())
        return answer

    relay.respond = reworded
    client = mediagen.Client(api_key=poor.api_key, base_url=relay.url, cache_dir=tmp_path)
    try:
        request = example_request(sandbox, poor, "vidra-2")
        quote = client.models.estimate_request(request)
        with pytest.raises(mediagen.PaymentRequiredError) as caught:
            client.videos.create(**request)
    finally:
        client.close()
        relay.close()
    # a service that sends no figures: they are read from the estimate and the balance
    assert caught.value.required == quote.credits_after_discount
    assert caught.value.available == 3.0


class FakeUploads:
    """A service whose first upload URL is refused with a 403 that never says "expired"."""

    def __init__(self) -> None:
        self.registered = 0
        self.server = FakeServer(self.respond)

    def respond(self, request):
        url = self.server.url
        if request.method == "POST" and request.path == "/v1/uploads":
            self.registered += 1
            ticket = {
                "asset_id": f"asset_{self.registered:024d}",
                "upload_url": f"{url}/files/upload/{self.registered}?sig=s",
                "required_headers": {"Content-Type": "image/png"},
                "expires_at": "2999-01-01T00:00:00Z",  # this machine's clock says: still good
                "media_type": "image",
                "status": "pending",
            }
            return Reply(200, {"Content-Type": "application/json"}, json.dumps(ticket).encode())
        if request.method == "PUT" and request.path.startswith("/files/upload/1"):
            body = {"error": {"code": "forbidden", "message": "Signature not valid now.",
                              "details": None, "trace_id": None}}  # fmt: skip
            return Reply(403, {"Content-Type": "application/json"}, json.dumps(body).encode())
        if request.method == "PUT":
            ready = {"asset_id": f"asset_{2:024d}", "status": "ready", "size_bytes": 4}
            return Reply(200, {"Content-Type": "application/json"}, json.dumps(ready).encode())
        return Reply(404)


def test_an_upload_url_refused_with_403_is_registered_again_without_reading_the_message(
    tmp_path,
):
    service = FakeUploads()
    client = mediagen.Client(api_key="mg-test-key", base_url=service.server.url,
                             cache_dir=tmp_path, journal=False)  # fmt: skip
    try:
        asset = client.uploads.upload(b"\x89PNG", filename="ref.png")
    finally:
        client.close()
        service.server.close()
    assert service.registered == 2
    assert asset.asset_id == f"asset_{2:024d}"


def test_the_widgets_poll_every_2_to_5_seconds_with_backoff(sandbox, tenant, tmp_path):
    """A job card polls as its client is configured to: by default the spec's 2 s, backing off
    to 5 s."""
    from mediagen.widgets import JobCard

    pauses: list[float] = []

    async def recorded(seconds: float) -> None:
        pauses.append(seconds)
        await asyncio.sleep(0.05)  # the job's real time passes; the pauses asked are recorded

    async def main() -> mediagen.Generation:
        async with mediagen.AsyncClient(api_key=tenant.api_key, base_url=sandbox.base_url,
                                        cache_dir=tmp_path, sleep=recorded) as aclient:  # fmt: skip
            gen = await aclient.images.create(model="pixel-1", prompt="a lighthouse [[slow:1]]")
            card = JobCard(aclient, gen)
            return await card.task

    final = asyncio.run(main())
    assert final.status == "completed"
    assert pauses
    assert pauses[0] >= 2.0
    assert all(2.0 <= p <= 5.0 for p in pauses)
    assert pauses == sorted(pauses)  # backing off, never speeding up

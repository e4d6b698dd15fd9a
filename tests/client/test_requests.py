"""The sans-I/O core: requests built and responses parsed by pure functions (no server)."""

from __future__ import annotations

import datetime as dt
import json
import pickle

import pytest

import mediagen
from mediagen.client import _requests
from mediagen.wire import _names as _wire


def test_submit_puts_the_idempotency_key_in_header_and_body():
    spec = _requests.submit("video", {"model": "vidra-2", "prompt": "x"}, "key-1")
    assert (spec.method, spec.path) == ("POST", "/v1/videos")
    assert spec.headers[_wire.IDEMPOTENCY_HEADER] == "key-1"
    assert spec.json == {"model": "vidra-2", "prompt": "x", "idempotency_key": "key-1"}
    assert spec.idempotent is True


def test_submit_without_a_key_is_not_idempotent_and_paths_follow_the_kind():
    assert _requests.submit("image", {}, None).idempotent is False
    assert _requests.submit("audio", {}, None).path == "/v1/audio"
    with pytest.raises(ValueError, match="kind"):
        _requests.submit("text", {}, None)


def test_list_query_drops_none_and_formats_datetimes_as_utc():
    when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    spec = _requests.list_generations(limit=100, status="pending", created_after=when)
    assert spec.params == {
        "limit": 100,
        "status": "pending",
        "created_after": "2026-01-02T01:04:05Z",
    }


def test_estimate_query_encodes_objects_as_json_and_booleans_as_words():
    spec = _requests.estimate("vidra-2", {"params": {"b": 1, "a": 2}, "generate_audio": True})
    assert spec.path == "/v1/models/vidra-2/estimate"
    assert json.loads(spec.params["params"]) == {"a": 2, "b": 1}
    assert spec.params["generate_audio"] == "true"


def test_path_segments_are_quoted_and_must_not_be_empty():
    assert _requests.get_generation("../credits").path == "/v1/generations/..%2Fcredits"
    with pytest.raises(ValueError):
        _requests.get_generation(" ")


def _error_body(code, message, details=None, trace_id="trace_1"):
    error = {"code": code, "message": message, "details": details, "trace_id": trace_id}
    return json.dumps({"error": error}).encode()


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (401, "unauthenticated", mediagen.AuthenticationError),
        (402, "payment_required", mediagen.PaymentRequiredError),
        (403, "forbidden", mediagen.PermissionDeniedError),
        (404, "not_found", mediagen.NotFoundError),
        (409, "conflict", mediagen.ConflictError),
        (422, "validation_error", mediagen.ValidationError),
        (429, "rate_limited", mediagen.RateLimitError),
        (500, "internal_error", mediagen.ServerError),
        (503, None, mediagen.ServerError),
        (418, "client_error", mediagen.BadRequestError),
    ],
)
def test_each_status_maps_to_its_exception(status, code, cls):
    error = _requests.error_from_response(status, {}, _error_body(code, "nope"))
    assert type(error) is cls
    assert isinstance(error, mediagen.APIError)
    assert (error.status, error.code, error.message, error.trace_id) == (
        status,
        code,
        "nope",
        "trace_1",
    )


def test_429_reads_retry_after_from_the_header():
    error = _requests.error_from_response(
        429, {"retry-after": "3"}, _error_body("rate_limited", "wait 3 s")
    )
    assert error.retry_after == 3.0


def test_402_does_not_parse_the_message_for_required_and_available():
    # error.message is "not meant for parsing": without the body's figures the submit fills
    # these from the estimate and GET /v1/credits, a bare response leaves them None.
    message = (
        "Insufficient credits: this request needs 30.00 credits and the organization has "
        "4.50 available."
    )
    error = _requests.error_from_response(402, {}, _error_body("payment_required", message))
    assert isinstance(error, mediagen.PaymentRequiredError)
    assert (error.required, error.available) == (None, None)
    assert "30.00" in str(error)  # the message itself is shown as the service wrote it
    assert "needs" not in str(error).splitlines()[-1]


def _refusal(**figures):
    body = json.loads(_error_body("payment_required", "Not enough credits."))
    body["error"].update(figures)
    return _requests.error_from_response(402, {}, json.dumps(body).encode())


def test_402_reads_required_and_available_from_the_error_body_and_says_them():
    error = _refusal(required_credits=12.5, available_credits=3)
    assert isinstance(error, mediagen.PaymentRequiredError)
    assert (error.required, error.available) == (12.5, 3.0)
    assert error.needed == 12.5  # the name of earlier releases
    assert error.shortfall == "needs 12.5 credits, 3 available"
    assert "needs 12.5 credits, 3 available" in str(error)
    assert pickle.loads(pickle.dumps(error)).required == 12.5  # noqa: S301


@pytest.mark.parametrize("odd", [True, "12.5", None, float("nan"), [1]])
def test_402_figures_that_are_not_numbers_are_unknown(odd):
    error = _refusal(required_credits=odd, available_credits=odd)
    assert (error.required, error.available) == (None, None)
    assert error.shortfall is None


def test_422_details_are_kept_and_shown_field_by_field():
    details = [
        {"loc": ["body", "duration_seconds"], "msg": "must be one of 5, 10", "type": "enum"},
        {"loc": ["body", "tier"], "msg": "unknown tier", "type": "enum"},
    ]
    error = _requests.error_from_response(
        422, {}, _error_body("validation_error", "invalid", details)
    )
    assert error.details == details
    text = str(error)
    assert "body.duration_seconds: must be one of 5, 10" in text
    assert "body.tier: unknown tier" in text


def test_the_get_422_detail_array_shape_is_parsed_too():
    body = {"detail": [{"loc": ["path", "generation_id"], "msg": "bad id", "type": "uuid"}]}
    error = _requests.error_from_response(422, {"X-Trace-Id": "trace_h"}, json.dumps(body).encode())
    assert isinstance(error, mediagen.ValidationError)
    assert error.code == "validation_error"
    assert error.details[0]["loc"] == ["path", "generation_id"]
    assert "path.generation_id: bad id" in error.message
    assert error.trace_id == "trace_h"


def test_a_body_that_is_not_json_still_gives_a_useful_error():
    error = _requests.error_from_response(502, {}, b"<html>Bad gateway</html>")
    assert isinstance(error, mediagen.ServerError)
    assert "Bad gateway" in error.message
    assert _requests.error_from_response(500, {}, b"").message == "HTTP 500 with no error body"


def test_page_cursor_stops_on_null_or_has_more_false():
    assert _requests.page_next_cursor({"data": [], "next_cursor": "c1", "has_more": True}) == "c1"
    assert _requests.page_next_cursor({"data": [], "next_cursor": None}) is None
    assert _requests.page_next_cursor({"next_cursor": "c1", "has_more": False}) is None
    assert _requests.page_items({"data": [{"id": 1}]}) == [{"id": 1}]
    assert _requests.page_items({"items": []}) == []


def test_errors_pickle_with_their_fields():
    import pickle

    error = _requests.error_from_response(
        429, {"Retry-After": "2"}, _error_body("rate_limited", "x")
    )
    again = pickle.loads(pickle.dumps(error))  # noqa: S301
    assert (type(again), again.retry_after, again.code) == (
        mediagen.RateLimitError,
        2.0,
        "rate_limited",
    )

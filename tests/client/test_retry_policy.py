"""The retry policy and the per-key gate: pure decisions, tested without a server or a clock."""

from __future__ import annotations

import pytest

from mediagen.client._requests import KeyGate, RetryPolicy, gate_for, parse_retry_after

POLICY = RetryPolicy(max_retries=5, base_delay=0.5, max_delay=4.0, max_retry_after=60)


@pytest.mark.parametrize("status", [400, 401, 402, 403, 404, 409, 422])
def test_client_errors_are_never_retried(status):
    assert POLICY.delay(0, status=status) is None


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_back_off_exponentially_up_to_the_cap(status):
    delays = [POLICY.delay(n, status=status, rand=lambda: 0.0) for n in range(5)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert POLICY.delay(5, status=status) is None  # retries exhausted


def test_jitter_stays_within_its_bounds():
    low = POLICY.backoff(3, rand=lambda: 1.0)
    high = POLICY.backoff(3, rand=lambda: 0.0)
    assert (low, high) == (2.0, 4.0)


def test_429_honours_retry_after_with_a_little_jitter():
    assert POLICY.delay(0, status=429, retry_after=3, rand=lambda: 0.0) == 3
    assert 3 <= POLICY.delay(0, status=429, retry_after=3, rand=lambda: 1.0) <= 3.25
    # a hint beyond what the caller accepts to wait is final
    assert POLICY.delay(0, status=429, retry_after=120) is None
    # no hint: plain backoff
    assert POLICY.delay(1, status=429, rand=lambda: 0.0) == 1.0


def test_non_idempotent_requests_are_not_retried_once_they_may_have_arrived():
    assert POLICY.delay(0, connection_error=True, idempotent=False, sent=True) is None
    assert POLICY.delay(0, connection_error=True, idempotent=False, sent=False) is not None
    assert POLICY.delay(0, status=503, idempotent=False) is None
    assert POLICY.delay(0, status=429, idempotent=False) is not None  # refused before any work


def test_connection_errors_of_idempotent_requests_are_retried():
    assert POLICY.delay(0, connection_error=True, rand=lambda: 0.0) == 0.5
    assert POLICY.delay(5, connection_error=True) is None


@pytest.mark.parametrize(
    ("value", "expected"), [("3", 3.0), ("1.5", 1.5), ("-2", 0.0), (None, None), ("soon", None)]
)
def test_retry_after_values(value, expected):
    assert parse_retry_after(value) == expected


def test_retry_after_as_an_http_date():
    import email.utils
    import time

    value = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= parse_retry_after(value) <= 31


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_gate_holds_every_request_of_a_key_after_a_429():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    assert gate.acquire() == 0
    gate.penalize(2.0)
    spacing = KeyGate.release_spacing
    assert gate.acquire() == pytest.approx(2.0)
    # everyone waits, not just the first, and they leave one at a time, not as a new storm
    assert gate.acquire() == pytest.approx(2.0 + spacing)
    clock.now += 1.5
    assert gate.acquire() == pytest.approx(0.5 + 2 * spacing)
    clock.now += 1
    assert gate.acquire() == 0


def test_gate_spaces_requests_at_its_rate():
    clock = FakeClock()
    gate = KeyGate(rate=10, clock=clock)
    waits = [gate.acquire() for _ in range(4)]
    assert waits == pytest.approx([0, 0.1, 0.2, 0.3])


def test_one_gate_per_service_and_key():
    a = gate_for("http://x", "key_a")
    assert gate_for("http://x", "key_a") is a
    assert gate_for("http://x", "key_b") is not a
    assert gate_for("http://y", "key_a") is not a

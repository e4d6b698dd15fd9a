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


def test_at_a_fixed_rate_a_429_holds_every_request_of_the_key():
    clock = FakeClock()
    gate = KeyGate(rate=1000, clock=clock)
    assert gate.acquire() == 0
    gate.penalize(2.0)
    spacing = KeyGate.release_spacing
    assert gate.acquire() == pytest.approx(2.0, abs=0.01)
    # everyone waits, not just the first, and they leave one at a time, not as a new storm
    assert gate.acquire() == pytest.approx(2.0 + spacing, abs=0.01)
    clock.now += 1.5
    assert gate.acquire() == pytest.approx(0.5 + 2 * spacing, abs=0.01)
    clock.now += 1
    assert gate.acquire() == pytest.approx(0, abs=0.01)


def _answered_at(gate: KeyGate, clock: FakeClock, demand: float, seconds: float) -> None:
    """Requests come ``demand`` a second for ``seconds``, each sent when the gate lets it
    (a demand above the pace keeps the pace binding), and answered without a 429."""
    end = clock.now + seconds
    while clock.now < end:
        clock.now += max(1.0 / demand, gate.acquire())
        gate.answered()


def test_a_429_teaches_the_pace_and_holds_the_key_for_its_retry_after():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    assert gate.pace is None  # nothing learned: nothing held back
    _answered_at(gate, clock, 20, 2.0)
    gate.penalize(1.0)
    assert gate.pace == pytest.approx(KeyGate.CUT * 20, rel=0.1)
    # every request of the key waits the service's Retry-After, the one it answered with them,
    # then they leave at the learned pace
    held = [gate.acquire() for _ in range(3)]
    assert held[0] == pytest.approx(1.0, abs=0.01)
    assert held[1] - held[0] == pytest.approx(1 / gate.pace, rel=0.3)
    assert held[2] - held[1] == pytest.approx(1 / gate.pace, rel=0.3)


def test_a_cut_after_a_ramp_starts_from_the_recent_rate_not_the_ramps():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 5, 3.0)  # the run's first seconds, a pace still growing
    _answered_at(gate, clock, 20, 2.0)  # then the limit's rate, and a 429
    gate.penalize(1.0)
    # over the last 5 s: 11 a second; over the last 2 s, less its burst share: 16
    assert gate.pace == pytest.approx(KeyGate.CUT * KeyGate.RECENT_SHARE * 20, rel=0.1)


def test_a_long_retry_after_holds_every_request_of_the_key_for_all_of_it():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 20, 2.0)
    gate.penalize(30.0)
    assert gate.acquire() == pytest.approx(30.0, abs=0.1)
    assert gate.pace is not None  # and the pace was lowered as well


def test_the_pace_retreats_when_429s_come_again_and_grows_back_once_they_stop():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 20, 2.0)
    gate.penalize(1.0)
    first = gate.pace
    clock.now += KeyGate.COOLDOWN
    gate.penalize(1.0)  # the limit fell: 429s again before the pace settled
    assert gate.pace <= KeyGate.RETREAT * first * 1.01  # at least halved
    low = gate.pace
    _answered_at(gate, clock, 1000, KeyGate.PLATEAU - 1)
    assert low < gate.pace < low * 1.15  # near the limit just found: a slow probe
    _answered_at(gate, clock, 1000, 3.0)
    assert gate.pace > low * 4  # no 429 for long: the limit may have been raised


def test_a_key_used_lightly_grows_no_pace():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 20, 2.0)
    gate.penalize(1.0)
    learned = gate.pace
    for _ in range(30):  # one request every 2 s: the pace never holds one back
        clock.now += 2.0
        assert gate.acquire() == 0
        gate.answered()
    assert gate.pace == learned


def test_a_slow_pace_grows_too_while_it_holds_requests_back():
    """Under one request a second, each request is held for longer than a second: the pace
    still binds and must grow (it stayed put, so a pace cut low never came back up)."""
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    gate.adopt(0.5)
    _answered_at(gate, clock, 1000, 6.0)  # far more demand than the pace lets through
    assert gate.pace > 0.5 * 4


def test_gate_spaces_requests_at_its_rate():
    clock = FakeClock()
    gate = KeyGate(rate=10, clock=clock)
    waits = [gate.acquire() for _ in range(4)]
    assert waits == pytest.approx([0, 0.1, 0.2, 0.3])


def test_a_told_pace_neither_grows_on_clean_answers_nor_is_cut_by_429s():
    clock = FakeClock()
    gate = KeyGate(rate=10, clock=clock)
    _answered_at(gate, clock, 1000, 20.0)  # far more demand than the pace, for long
    for _ in range(3):
        gate.penalize(1.0, sent_at=clock.now)
        clock.now += 1.0 + KeyGate.COOLDOWN
    assert gate.pace == 10
    assert gate.learned is None
    first = gate.acquire()
    assert [gate.acquire() - first for _ in range(3)] == pytest.approx([0.1, 0.2, 0.3])


def test_one_gate_per_service_and_key():
    a = gate_for("http://x", "key_a")
    assert gate_for("http://x", "key_a") is a
    assert gate_for("http://x", "key_b") is not a
    assert gate_for("http://y", "key_a") is not a


def test_a_429_to_a_request_sent_before_the_cut_does_not_cut_the_pace_again():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 20, 2.0)
    sent = clock.now - 0.01
    gate.penalize(1.0, sent_at=sent)
    first = gate.pace
    clock.now += KeyGate.COOLDOWN
    gate.penalize(1.0, sent_at=sent)  # in flight at the old pace: says nothing of the new
    assert gate.pace == first
    gate.penalize(1.0, sent_at=clock.now - 0.1)  # sent at the new pace: the limit fell
    assert gate.pace <= KeyGate.RETREAT * first * 1.01


def test_the_accepted_rate_a_cut_starts_from_leaves_out_a_lull_before_the_run():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 20, 0.5)  # a table priced
    clock.now += 3.0  # the run starts
    _answered_at(gate, clock, 20, 1.5)
    gate.penalize(1.0)
    assert gate.pace == pytest.approx(KeyGate.CUT * 20, rel=0.2)


def test_a_cut_after_a_lull_cuts_the_pace_it_held_not_to_the_floor():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    _answered_at(gate, clock, 20, 2.0)
    gate.penalize(1.0)
    held = gate.pace
    clock.now += KeyGate.WINDOW + 5  # nothing sent here since: no accepted rate to read
    gate.penalize(1.0)
    assert gate.pace == pytest.approx(KeyGate.CUT * held)


def test_a_cut_elsewhere_cuts_once_per_cooldown_and_tells_the_rate_accepted_here():
    clock = FakeClock()
    gate = KeyGate(clock=clock)
    told: list[tuple[float, float]] = []
    gate.cut_listeners.append(lambda accepted, factor: told.append((accepted, factor)))
    _answered_at(gate, clock, 20, 2.0)
    assert gate.cut_elsewhere()  # another machine met the 429: this one cuts as its own
    assert gate.pace == pytest.approx(KeyGate.CUT * 20, rel=0.1)
    assert told == [(pytest.approx(20, rel=0.1), KeyGate.CUT)]
    first = gate.pace
    assert not gate.cut_elsewhere()  # the same crowding, heard twice
    gate.penalize(1.0, sent_at=clock.now - 0.01)  # in flight before the cut: no second cut
    assert gate.pace == first
    assert len(told) == 1
    clock.now += KeyGate.COOLDOWN
    gate.penalize(1.0, sent_at=clock.now - 0.01)  # its own, at the new pace: told too
    assert gate.pace < first
    assert len(told) == 2
    assert told[1][1] == KeyGate.RETREAT
    assert not KeyGate(rate=10, clock=clock).cut_elsewhere()  # a pace told is not learned

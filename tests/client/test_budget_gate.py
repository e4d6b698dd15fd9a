"""Every spend passes one gate that takes only a finite number of credits >= 0: a limit set
late, a batch's cap, a quote from the service and every line of a spend limit's file. Each
case below once opened a guard and spent."""

from __future__ import annotations

import json
import math

import pytest
from client_helpers import Recorder, example

import mediagen

NOT_CREDITS = [
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param("nan", "'nan'", id="string"),
    pytest.param(-5, "-5", id="negative"),
]


@pytest.mark.parametrize(("cap", "shown"), NOT_CREDITS)
def test_a_batch_cap_that_is_not_a_finite_number_sends_nothing(make_client, catalog, cap, shown):
    recorder = Recorder()
    client = make_client(recorder=recorder)
    request = example(catalog, "pixel-1")
    with pytest.raises(ValueError, match=rf"max_credits .*{shown}"):
        client.submit_batch([request, request], max_credits=cap)
    assert recorder.count("POST") == 0


@pytest.mark.parametrize(("limit", "shown"), NOT_CREDITS)
def test_a_limit_set_after_the_budget_was_made_is_checked_too(limit, shown):
    found = mediagen.Budget(10)
    with pytest.raises(ValueError, match=rf"limit .*{shown}"):
        found.limit = limit
    assert found.limit == 10
    found.limit = 0.5
    with pytest.raises(mediagen.BudgetExceededError):
        found.reserve(1)


@pytest.mark.parametrize(("amount", "shown"), NOT_CREDITS)
def test_a_reservation_that_is_not_a_finite_number_is_refused(amount, shown, tmp_path):
    for guard in (mediagen.Budget(10), mediagen.SpendLimit(daily=10, path=tmp_path / "s.jsonl")):
        with pytest.raises(ValueError, match=rf"estimate .*{shown}"):
            guard.reserve(amount)
        assert guard.remaining == 10


@pytest.mark.parametrize(
    "line",
    [
        '{"t": %(t)s, "credits": NaN}',
        '{"t": %(t)s, "credits": Infinity}',
        '{"t": %(t)s, "credits": -1e9}',
        '{"t": %(t)s, "credits": "lots"}',
        '{"t": NaN, "credits": 1}',
    ],
    ids=["nan", "infinity", "huge-release", "string", "nan-time"],
)
def test_a_poisoned_line_in_a_spend_limits_file_fails_closed(make_client, catalog, tmp_path, line):
    """The file outlives the kernel and anyone can append to it: a line no submit wrote would
    give the window back its credits (or make every comparison false). It refuses every
    submit, naming the file and the line, until it is fixed."""
    import time

    path = tmp_path / "spend.jsonl"
    path.write_text(
        json.dumps({"t": time.time(), "credits": 9.5}) + "\n" + line % {"t": time.time()} + "\n"
    )
    recorder = Recorder()
    client = make_client(recorder=recorder, budget=mediagen.SpendLimit(daily=10, path=path))
    with pytest.raises(ValueError, match=r"spend\.jsonl, line 2"):
        client.images.create(**example(catalog, "pixel-1"))
    assert recorder.count("POST") == 0


def test_a_release_of_an_earlier_reservation_still_reads(tmp_path):
    """What the class itself writes (a reservation, and its release when the service refuses
    the submit) stays readable, across instances."""
    path = tmp_path / "spend.jsonl"
    first = mediagen.SpendLimit(daily=10, path=path)
    first.reserve(4)
    first.reserve(2.5)
    first.release(4)
    again = mediagen.SpendLimit(daily=10, path=path)
    assert again.remaining == 7.5
    again.release(2.5)
    assert again.remaining == 10

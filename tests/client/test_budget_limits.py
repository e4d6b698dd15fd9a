"""A guard is never disabled by its own limit: NaN, infinity, a string or a bool is refused
with a ValueError naming the argument and the value, before anything can be sent."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from client_helpers import Recorder, example

import mediagen

BAD_LIMITS = [
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param(-math.inf, "-inf", id="-inf"),
    pytest.param(-1, "-1", id="negative"),
    pytest.param("2", "'2'", id="string"),
    pytest.param(True, "True", id="bool"),
    pytest.param(None, "None", id="none-in-a-budget"),
]


@pytest.mark.parametrize(("limit", "shown"), BAD_LIMITS)
def test_a_budget_block_refuses_a_limit_that_is_not_a_finite_number(limit, shown):
    with pytest.raises(ValueError, match=rf"budget .*{shown}"), mediagen.budget(limit):
        pass


@pytest.mark.parametrize(("limit", "shown"), BAD_LIMITS)
def test_a_budget_object_refuses_it_too(limit, shown):
    with pytest.raises(ValueError, match=rf"limit .*{shown}"):
        mediagen.Budget(limit)


@pytest.mark.parametrize(("limit", "shown"), BAD_LIMITS[:-1])
@pytest.mark.parametrize("window", ["daily", "weekly"])
def test_a_spend_limit_names_the_window_whose_limit_is_wrong(limit, shown, window, tmp_path):
    with pytest.raises(ValueError, match=rf"{window} .*{shown}"):
        mediagen.SpendLimit(**{window: limit}, path=tmp_path / "limit.jsonl")
    assert not (tmp_path / "limit.jsonl").exists()


@pytest.mark.parametrize(("limit", "shown"), BAD_LIMITS[:-1])
def test_a_client_refuses_a_budget_that_is_not_a_finite_number(limit, shown, sandbox, tenant):
    with pytest.raises(ValueError, match=rf"budget .*{shown}"):
        mediagen.Client(api_key=tenant.api_key, base_url=sandbox.base_url, budget=limit)


def test_the_mean_of_an_empty_column_cannot_open_the_guard(make_client, catalog, sandbox, tenant):
    """The probe's case: a NaN limit let every submit through and charged."""
    recorder = Recorder()
    client = make_client(recorder=recorder)
    empty: list[float] = []
    limit = sum(empty) / len(empty) if empty else math.nan
    request = example(catalog, "vidra-2", "text_to_video")
    with pytest.raises(ValueError, match="finite"), mediagen.budget(limit):
        client.videos.create(**request)
    assert recorder.count("POST") == 0
    assert sandbox.admin.ledger(tenant.org_id)["entries"][-1]["kind"] == "grant"


def test_any_real_number_is_still_a_limit(make_client, catalog):
    client = make_client()
    request = example(catalog, "pixel-1")  # 1 credit
    with mediagen.budget(Fraction(3, 2)) as budget:
        client.images.create(**request)
        with pytest.raises(mediagen.BudgetExceededError):
            client.images.create(**request)
    assert budget.limit == 1.5
    assert mediagen.budget(0) is not None

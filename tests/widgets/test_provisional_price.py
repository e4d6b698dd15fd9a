"""The estimate shows a provisional price the moment the form changes, then the service's.

Against the sandbox: the provisional price (from the catalog entry's price tables) is there
before any estimate is asked for, equals the service's when the catalog is current, and when
the form holds an outdated catalog entry the service's figure wins and the difference is told.
"""

from __future__ import annotations

import copy

from widget_loop import run, until

import mediagen
from mediagen.widgets import LiveEstimate, RequestForm
from mediagen.widgets._loop_client import aclose


def _entry(client: mediagen.Client, model_id: str) -> dict:
    return client.models.get(model_id).raw


def test_a_changed_field_is_priced_at_once_and_confirmed_by_the_service(make_client, tenant):
    client = make_client(tenant)
    form = RequestForm(_entry(client, "vidra-2"))
    estimate = LiveEstimate(client, form, debounce=0.2)

    async def scenario():
        await until(lambda: estimate.status == "ready", what="first estimate")
        form.set_value("duration_seconds", 10)
        # priced before the debounce has even run: no estimate was asked for this request yet
        assert estimate.status == "estimating"
        assert estimate.provisional["credits"] == 60.0  # 4 per s x 10 s x 1.5 with audio
        assert estimate.provisional["billable_duration_seconds"] == 10.0
        await until(lambda: estimate.status == "ready", what="service estimate")
        assert estimate.estimate["credits"] == estimate.provisional["credits"]
        assert estimate.difference is None
        await aclose(client)

    run(scenario())


def test_a_price_that_counts_an_input_file_is_unknown_until_the_service_measures_it(
    make_client, tenant
):
    client = make_client(tenant)
    form = RequestForm(_entry(client, "talkhead"))
    estimate = LiveEstimate(client, form, debounce=0)

    async def scenario():
        assert estimate.provisional["credits"] is None
        assert "audio" in estimate.provisional["unknown"]
        await until(lambda: estimate.status == "ready", what="service estimate")
        assert estimate.estimate["credits"] > 0  # the service measured the sample's length
        assert estimate.difference is None  # nothing local to compare
        await aclose(client)

    run(scenario())


def test_an_outdated_catalog_loses_to_the_service_and_the_difference_is_told(make_client, tenant):
    client = make_client(tenant)
    stale = copy.deepcopy(_entry(client, "lumen-4k"))  # prices changed since it was read
    stale["modes"][0]["price"]["table"] = {"1K": 1, "2K": 2, "4K": 4}
    form = RequestForm(stale)
    estimate = LiveEstimate(client, form, debounce=0)

    async def scenario():
        assert estimate.provisional["credits"] == 1.0
        await until(lambda: estimate.status == "ready", what="service estimate")
        assert estimate.estimate["credits"] == 2.0
        assert estimate.difference == 1.0
        await aclose(client)

    run(scenario())


def test_each_priced_choice_is_priced_ahead_for_the_view_to_show_when_picked(make_client, tenant):
    """The view shows a picked choice's price before the kernel answers: the kernel prices
    every choice of the fields that change the price (one field changed at a time), and each
    choice's price is what the form would show once that choice is made."""
    client = make_client(tenant)
    form = RequestForm(_entry(client, "vidra-2"))
    estimate = LiveEstimate(client, form, debounce=0)
    assert estimate.form_token == form.token
    assert len(form.token) == 32

    async def scenario():
        await until(lambda: estimate.status == "ready", what="first estimate")
        prices = estimate.choice_prices
        fields = prices["fields"]
        assert set(fields) >= {"duration_seconds", "tier", "generate_audio"}
        assert "aspect_ratio" not in fields  # every choice costs the same
        # with the values they were priced from: the view never prices a choice already made
        assert prices["current"] == {name: form.values.get(name) for name in fields}
        for name, options in fields.items():
            for value, shown in options:
                before = dict(form.values)
                form.set_value(name, value)
                assert shown["credits"] == estimate.provisional["credits"], (name, value)
                assert (
                    shown["billable_duration_seconds"]
                    == (estimate.provisional["billable_duration_seconds"])
                )
                form.values = before
        by_duration = dict(map(tuple, fields["duration_seconds"]))
        assert (by_duration[5]["credits"], by_duration[10]["credits"]) == (30.0, 60.0)
        # every request priced moves ``seq``, which the view waits for before pricing again
        seq = estimate.choice_prices["seq"]
        form.set_value("prompt", "a heron")
        assert estimate.choice_prices["seq"] == seq + 1
        # a request that cannot go has no price, nor its choices
        form.set_value("prompt", "")
        assert form.issues
        assert estimate.choice_prices["fields"] == {}
        assert estimate.choice_prices["seq"] > seq + 1
        await aclose(client)

    run(scenario())


def test_the_prices_say_which_edit_of_the_view_they_follow(make_client, tenant):
    """The view shows a picked choice's price until the kernel's prices for that very edit
    arrive: prices of an older request (a reappearing view asks for them) must not end it, and
    an edit that changed nothing is acknowledged all the same, or the view would wait for ever."""
    client = make_client(tenant)
    form = RequestForm(_entry(client, "vidra-2"))
    estimate = LiveEstimate(client, form, debounce=0)

    def view_edits(values: dict, edit_id: str) -> None:
        form._on_view_message(form, {"action": "edit", "values": values, "id": edit_id}, [])

    async def scenario():
        await until(lambda: estimate.status == "ready", what="first estimate")
        assert estimate.choice_prices["edit"] is None
        view_edits({"duration_seconds": 10}, "e1")
        assert estimate.choice_prices["edit"] == "e1"
        assert estimate.choice_prices["current"]["duration_seconds"] == 10
        estimate._on_view_message(estimate, {"action": "refresh"}, [])  # a view reappeared
        assert estimate.choice_prices["edit"] == "e1"  # the same edit, priced again
        seq = estimate.choice_prices["seq"]
        view_edits({"duration_seconds": 10}, "e2")  # no change: nothing priced again
        assert estimate.choice_prices["seq"] == seq
        assert estimate.choice_prices["edit"] == "e2"
        view_edits({"no_such_field": 1}, "e3")
        assert estimate.choice_prices["edit"] == "e3"

        def broken(changes):
            raise ValueError("no such value")

        form.edit = broken
        view_edits({"duration_seconds": 5}, "e4")
        assert "no such value" in form.error
        assert estimate.choice_prices["edit"] == "e4"  # answered: the view stops waiting
        await aclose(client)

    run(scenario())

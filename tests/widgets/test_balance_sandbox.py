"""One balance for the credit meter and the estimate, against the real sandbox: a refusal for
credits, a top-up made elsewhere and an invalid form never leave the two disagreeing or the
estimate promising what the service would refuse."""

from __future__ import annotations

from widget_loop import run, until

from mediagen.widgets import Studio
from mediagen.widgets._loop_client import aclose


def shown_balances(studio: Studio) -> tuple[float | None, float | None]:
    return studio.meter.credits.get("balance"), studio.estimate.estimate.get("balance")


def can_submit(studio: Studio) -> bool:
    return studio.estimate.status == "ready" and not studio.estimate.blocked_reason


async def priced_studio(client) -> Studio:
    """A studio on pixel-1's example, priced, with the meter filled."""
    studio = Studio(client, debounce=0.02)
    await studio.ready
    studio.picker.value = "pixel-1"
    await until(lambda: can_submit(studio) and studio.meter.credits)
    return studio


def test_a_402_then_a_top_up_keep_meter_and_estimate_agreeing(make_client, tenant, sandbox):
    client = make_client(tenant)
    admin = sandbox.admin

    async def scenario():
        studio = await priced_studio(client)
        price = studio.estimate.estimate["credits_after_discount"]
        assert shown_balances(studio) == (1000, 1000)

        admin.set_balance(tenant.org_id, price / 2)  # spent elsewhere after the estimate
        studio.estimate.submit()
        await until(lambda: studio.estimate.error, what="the refusal")
        await until(lambda: not studio.meter.refreshing)
        refused = {
            "error": studio.estimate.error,
            "balances": shown_balances(studio),
            "affordable": studio.estimate.estimate["can_afford"],
            "blocked": studio.estimate.blocked_reason,
            "cards": len(studio.cards),
        }

        admin.set_balance(tenant.org_id, 500)  # a top-up; the user refreshes the meter
        await studio.meter.refresh()
        topped = {
            "error": studio.estimate.error,
            "balances": shown_balances(studio),
            "affordable": studio.estimate.estimate["can_afford"],
            "blocked": studio.estimate.blocked_reason,
        }
        studio.estimate.submit()
        await until(lambda: studio.cards and studio.cards[0].status == "completed")
        await aclose(client)
        return price, refused, topped

    price, refused, topped = run(scenario())
    assert refused["cards"] == 0
    credits = "credit" if price == 1 else "credits"
    shortfall = f"this request needs {price:g} {credits}, {price / 2:g} available."
    assert refused["error"].startswith(f"Not sent: {shortfall} ")
    assert "Nothing was charged" in refused["error"]
    assert refused["balances"] == (price / 2, price / 2)
    assert refused["affordable"] is False
    assert refused["blocked"] == f"Not enough credits: {price} needed, {price / 2} available"
    assert topped == {"error": "", "balances": (500, 500), "affordable": True, "blocked": ""}


def test_an_edit_clears_a_refusal_and_an_invalid_form_shows_no_price(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        studio = await priced_studio(client)
        sandbox.admin.set_balance(tenant.org_id, 0.01)
        studio.estimate.submit()
        await until(lambda: studio.estimate.error, what="the refusal")
        form = studio.form
        form.values = {**form.values, "prompt": ""}  # the user edits: now the form is invalid
        after_edit = (studio.estimate.error, dict(studio.estimate.estimate))
        blocked = studio.estimate.blocked_reason
        await aclose(client)
        return after_edit, blocked

    (error, estimate), blocked = run(scenario())
    assert error == ""
    assert estimate == {}, "no price, no 'allowed' for a request that cannot be sent"
    assert blocked == "Fix the form: Prompt is required"


def test_a_meter_refresh_moves_the_estimates_balance_too(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        studio = await priced_studio(client)
        sandbox.admin.set_balance(tenant.org_id, 0.5)
        await studio.meter.refresh()
        seen = shown_balances(studio), studio.estimate.estimate["can_afford"]
        await aclose(client)
        return seen, studio.estimate.blocked_reason

    (balances, affordable), blocked = run(scenario())
    assert balances == (0.5, 0.5)
    assert affordable is False
    assert blocked.startswith("Not enough credits:")

"""Submit, job cards, gallery, credit meter, errors, re-attach and media transport: the studio's
behaviour against the real sandbox, with trait changes standing in for clicks."""

from __future__ import annotations

import asyncio
import json

import httpx
from ipywidgets.widgets import widget as ipywidgets_widget
from widget_loop import run, until

from mediagen.widgets import CreditMeter, Gallery, JobCard, MediaPlayer, Studio
from mediagen.widgets._loop_client import aclose


async def studio_on(client, model: str, **values) -> Studio:
    """A studio with ``model`` chosen (its example request, changed by ``values``) and priced."""
    studio = Studio(client, debounce=0.02)
    await studio.ready
    studio.picker.value = model
    if values:
        studio.form.values = {**studio.form.values, **values}
    await until(lambda: can_submit(studio))
    return studio


def can_submit(studio: Studio) -> bool:
    return studio.estimate.status == "ready" and not studio.estimate.blocked_reason


def ledger_kinds(sandbox, tenant) -> list[str]:
    return [e["kind"] for e in sandbox.admin.ledger(tenant.org_id)["entries"]]


def test_a_double_click_is_one_generation_charged_once(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        studio = await studio_on(client, "pixel-1", prompt="a lighthouse [[slow:0.3]]")
        price = studio.estimate.estimate["credits_after_discount"]
        studio.estimate.click = "click-1"  # two clicks in a row, as a double click sends them
        studio.estimate.click = "click-2"
        assert studio.estimate.submitting
        assert studio.estimate.blocked_reason == "Submitting…"
        await until(lambda: studio.cards and studio.cards[0].status == "completed")
        await until(
            lambda: studio.estimate.status == "ready" and not studio.estimate.blocked_reason
        )
        studio.estimate.click = "click-1"  # a re-delivered click reuses its idempotency key
        await until(lambda: studio.estimate.submitted_count == 2, what="the replay")
        await until(lambda: studio.meter.session_count == 1 and not studio.meter.refreshing)
        await aclose(client)
        return studio, price

    studio, price = run(scenario())
    assert len(studio.cards) == 1, "the replay is the same generation: no second card"
    generations = list(client.generations.list())
    assert len(generations) == 1
    assert ledger_kinds(sandbox, tenant) == ["grant", "reserve", "charge"]
    assert generations[0].credits_charged == price
    assert studio.meter.credits["balance"] == 1000 - price
    assert studio.meter.session_spend == price


def test_a_click_racing_a_form_change_is_not_sent_and_says_so(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        studio = await studio_on(client, "pixel-1", prompt="a lighthouse")
        studio.form.values = {**studio.form.values, "resolution": "2k"}  # the price changes...
        assert studio.estimate.status == "estimating"
        studio.estimate.click = "raced"  # ...and the click lands before the new estimate
        await until(lambda: can_submit(studio))
        await asyncio.sleep(0.2)
        notice = studio.estimate.error
        studio.estimate.click = "after"  # the next click, with the new price shown, goes
        await until(lambda: studio.cards and studio.cards[0].status == "completed")
        await aclose(client)
        return studio, notice

    studio, notice = run(scenario())
    assert "Not sent" in notice
    assert studio.estimate.error == ""
    assert len(list(client.generations.list())) == 1
    assert ledger_kinds(sandbox, tenant) == ["grant", "reserve", "charge"]


def test_job_card_goes_from_pending_to_completed_with_players(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        studio = await studio_on(
            client, "pixel-1", prompt="three boats [[slow:0.5]]", generate_image_count=3
        )
        reserved = studio.estimate.estimate["credits_after_discount"]
        studio.estimate.submit()
        card = await until(lambda: studio.cards and studio.cards[0])
        assert card.status == "pending"
        assert card.reserved == reserved
        assert card.items == []
        assert "reserve" in ledger_kinds(sandbox, tenant)
        await card.task
        await until(lambda: studio.gallery.entries and not studio.meter.refreshing)
        await aclose(client)
        return studio, card, reserved

    studio, card, reserved = run(scenario())
    assert card.status == "completed"
    assert card.error == ""
    assert card.generation["credits_charged"] == reserved
    assert card.generation["watched_s"] >= 0.5
    assert [i["kind"] for i in card.items] == ["image"] * 3
    for item, output in zip(card.items, card.result.outputs, strict=True):
        assert (item["width"], item["height"]) == (output.width, output.height)
        assert item["asset_id"] == output.asset_id
        meta, buffers = card.media({"key": item["key"]}, [])
        assert meta["content_type"] == output.content_type == "image/png"
        assert buffers == [output.local_path.read_bytes()]
    assert studio.meter.credits["balance"] == 1000 - reserved
    assert studio.meter.session_spend == reserved


def test_failed_job_shows_code_and_message_and_refunds(make_client, tenant, sandbox):
    client = make_client(tenant)

    async def scenario():
        studio = await studio_on(client, "voxa-tts", text="Hello there [[fail:safety]]")
        studio.estimate.submit()
        card = await until(lambda: studio.cards and studio.cards[0])
        await card.task
        await until(lambda: studio.gallery.entries and studio.meter.credits.get("reserved") == 0)
        await aclose(client)
        return studio, card

    studio, card = run(scenario())
    assert card.status == "failed"
    assert card.generation["error"]["code"] == "safety"
    assert "safety filter" in card.generation["error"]["message"]
    assert card.generation["credits_charged"] is None
    assert card.items == []
    assert ledger_kinds(sandbox, tenant) == ["grant", "reserve", "refund"]
    assert studio.meter.credits["balance"] == 1000
    assert studio.meter.session_spend == 0
    assert studio.gallery.entries[0]["error"]["code"] == "safety"


def test_gallery_holds_many_generations_in_one_widget_filtered_and_lazy(make_client, tenant):
    client = make_client(tenant)
    made = [
        client.images.create(model="pixel-1", prompt="four red kites", generate_image_count=4),
        client.audio.create(model="voxa-tts", text="A short hello", voice_name="Aria"),
        client.videos.create(model="wave-1", prompt="blue waves", num_frames=40),
        client.images.create(model="pixel-1", prompt="kites [[fail:safety]]"),
    ]
    done = [g.wait() for g in made]
    client = make_client(tenant)
    gallery = Gallery(client)
    before = set(ipywidgets_widget._instances)

    async def scenario():
        await gallery.load_recent(limit=10)
        await aclose(client)

    run(scenario())
    assert set(ipywidgets_widget._instances) == before, "one widget, not one per output"
    assert gallery.total == 4
    assert len(gallery.entries) == 4
    by_id = {e["id"]: e for e in gallery.entries}
    assert [i["kind"] for i in by_id[done[0].id]["items"]] == ["image"] * 4
    assert [i["kind"] for i in by_id[done[1].id]["items"]] == ["audio"]
    assert [i["kind"] for i in by_id[done[2].id]["items"]] == ["video"]
    assert by_id[done[3].id]["items"] == []
    assert by_id[done[3].id]["status"] == "failed"
    # lazy: the entries describe media by key only; bytes come when a view asks for one
    # (the front-end code, ``_esm`` and ``_css``, is the same for every gallery: not counted)
    state = json.dumps({k: v for k, v in gallery.get_state().items() if k not in ("_esm", "_css")})
    assert len(state) < 8_000
    key = by_id[done[2].id]["items"][0]["key"]
    meta, buffers = gallery.media({"key": key}, [])
    assert meta["content_type"] == "video/mp4"
    assert buffers[0] == done[2].outputs[0].local_path.read_bytes()

    gallery.kind = "audio"
    assert [e["id"] for e in gallery.entries] == [done[1].id]
    gallery.kind, gallery.status = "image", "failed"
    assert [e["id"] for e in gallery.entries] == [done[3].id]
    gallery.status, gallery.query = "", "red kites"
    assert [e["id"] for e in gallery.entries] == [done[0].id]
    gallery.kind, gallery.query = "", ""
    assert gallery.total == 4
    assert len(gallery.entries) == 4


def test_credit_meter_shows_balance_cap_and_session_spend(make_client, tenant_factory):
    tenant = tenant_factory(balance=1000, discount_percent=10, cap=50)
    client = make_client(tenant)

    async def scenario():
        meter = CreditMeter(client)
        await meter.refresh()
        first = dict(meter.credits)
        studio = await studio_on(client, "pixel-1")
        price = studio.estimate.estimate["credits_after_discount"]
        assert studio.estimate.estimate["discount_percent"] == 10
        studio.estimate.submit()
        card = await until(lambda: studio.cards and studio.cards[0])
        await card.task
        await until(lambda: studio.meter.session_count == 1 and not studio.meter.refreshing)
        await aclose(client)
        return first, studio.meter, price

    first, meter, price = run(scenario())
    assert first["balance"] == 50
    assert first["organization_balance"] == 1000
    assert first["member_limit"]["limit"] == 50
    assert first["member_limit"]["used"] == 0
    assert first["member_limit"]["resets_at"].startswith("20")
    assert price == 0.9  # 1 credit, 10 % off: shown as the service states it
    assert meter.credits["member_limit"]["used"] == price
    assert meter.credits["balance"] == 50 - price
    assert meter.session_spend == price
    assert meter.session_count == 1


def test_errors_in_callbacks_and_background_work_show_in_the_widgets(
    make_client, tenant_factory, sandbox
):
    tenant = tenant_factory()
    client = make_client(tenant)

    async def scenario():
        studio = await studio_on(client, "pixel-1")
        # a listener that raises: the card says so instead of the error vanishing
        studio.estimate.submit()
        card = await until(lambda: studio.cards and studio.cards[0])
        card.on_finished(lambda generation: 1 / 0)
        await card.task
        assert card.error == "After the job finished: division by zero"
        # the balance drops between the estimate and the click: the submit is refused
        await until(
            lambda: studio.estimate.status == "ready" and not studio.estimate.blocked_reason
        )
        sandbox.admin.set_balance(tenant.org_id, 0.5)
        studio.estimate.submit()
        await until(lambda: studio.estimate.error, what="submit error")
        assert studio.estimate.error.startswith("Not sent:")  # a refusal: nothing ran
        assert "insufficient" in studio.estimate.error.lower()
        assert not studio.estimate.submitting
        # the key is revoked: the credit meter and the estimate report it
        sandbox.admin.revoke_key(tenant.key_id)
        studio.meter.refresh()
        await until(lambda: studio.meter.error, what="meter error")
        studio.form.set_value("prompt", "another lighthouse")
        await until(lambda: studio.estimate.status == "error", what="estimate error")
        await aclose(client)
        return studio

    studio = run(scenario())
    assert studio.meter.error.startswith("Credits:")
    assert "(" in studio.meter.error  # the service's error code is named
    assert studio.estimate.error.startswith("Estimate failed:")
    assert studio.estimate.blocked_reason == "No estimate: see the error above"
    # the refused submit reserved nothing: only the first job's reserve and charge
    assert ledger_kinds(sandbox, tenant)[:3] == ["grant", "reserve", "charge"]
    assert "reserve" not in ledger_kinds(sandbox, tenant)[3:]


def test_a_studio_with_a_bad_key_says_so_in_the_picker(sandbox, tmp_path):
    import mediagen

    client = mediagen.Client(
        api_key="mk_wrong", base_url=sandbox.base_url, cache_dir=tmp_path, max_retries=0
    )

    async def scenario():
        studio = Studio(client)
        await studio.ready
        await aclose(studio.client)
        return studio

    studio = run(scenario())
    client.close()
    assert studio.picker.error.startswith("Loading the catalog:")
    assert studio.picker.options == []
    assert not studio.picker.loading


def test_a_restarted_kernel_reattaches_to_pending_generations(make_client, tenant, tmp_path):
    cache = tmp_path / "shared-cache"

    async def before_restart():
        client = make_client(tenant, cache_dir=cache)
        studio = await studio_on(client, "pixel-1", prompt="slow fox [[slow:1.5]]")
        studio.estimate.submit()
        card = await until(lambda: studio.cards and studio.cards[0])
        await until(lambda: card.generation.get("id"))
        await aclose(client)
        return card.generation["id"]

    pending_id = run(before_restart())  # the loop ends: the "kernel" is gone mid-job

    async def after_restart():
        client = make_client(tenant, cache_dir=cache)  # a new client on the same journal
        studio = Studio(client, debounce=0)
        await studio.ready
        assert [c.generation["id"] for c in studio.cards] == [pending_id]
        card = studio.cards[0]
        assert card.status == "pending"
        await card.task
        await until(lambda: studio.gallery.entries)
        await aclose(client)
        return card, studio

    card, studio = run(after_restart())
    assert card.status == "completed"
    assert card.items
    assert card.items[0]["kind"] == "image"
    assert studio.gallery.entries[0]["id"] == pending_id

    async def third_start():  # nothing pending any more: no cards
        client = make_client(tenant, cache_dir=cache)
        studio = Studio(client)
        await studio.ready
        await aclose(client)
        return studio

    assert run(third_start()).cards == []


def test_media_come_from_the_local_copy_and_no_trait_holds_bytes_or_the_key(
    make_client, tenant, sandbox
):
    client = make_client(tenant)
    created_before = set(ipywidgets_widget._instances)

    async def scenario():
        with sandbox.admin.config_changed(output_url_ttl_seconds=1.5):
            studio = await studio_on(client, "voxa-tts", text="Short and sweet")
            studio.estimate.submit()
            card = await until(lambda: studio.cards and studio.cards[0])
            await card.task
        await until(lambda: studio.gallery.entries and not studio.meter.refreshing)
        await asyncio.sleep(1.6)  # the service URL has expired by now
        await aclose(client)
        return studio, card

    _studio, card = run(scenario())
    output = card.result.outputs[0]
    expired = httpx.get(output.url, timeout=10)
    assert expired.status_code == 403
    assert "expired" in expired.text
    meta, buffers = card.media({"key": card.items[0]["key"]}, [])
    assert meta["content_type"] == output.content_type
    assert meta["content_type"].startswith("audio/")
    assert buffers == [output.local_path.read_bytes()]
    player = MediaPlayer.from_output(output)  # a player made later reads the same local copy
    assert player.media({"key": player.item["key"]}, [])[1] == buffers

    api_key = tenant.api_key
    head = buffers[0][:64]
    widgets = [w for k, w in ipywidgets_widget._instances.items() if k not in created_before]
    assert len(widgets) > 10
    checked = 0
    for widget in widgets:
        state = widget.get_state()
        for name, value in state.items():
            assert not isinstance(value, (bytes, bytearray, memoryview)), (widget, name)
        text = json.dumps(state, default=str)
        assert api_key not in text, f"the API key is in a trait of {type(widget).__name__}"
        assert api_key[-12:] not in text
        assert head.hex() not in text
        assert repr(head)[2:40] not in text
        for name in widget.trait_names():
            assert api_key not in repr(getattr(widget, name, "")), (type(widget).__name__, name)
        checked += 1
    assert checked == len(widgets)
    assert isinstance(card, JobCard)


def test_a_card_held_by_the_rate_limit_says_so_then_finishes(make_client, tenant, sandbox):
    """While the key's limit answers its polls with 429, the card says it waits for the rate
    limit (a held job must not read as a frozen one); the note goes once the job is done."""
    client = make_client(tenant)
    gen = client.images.create(model="pixel-1", prompt="a held lighthouse [[slow:3]]")
    notes: list[str] = []

    async def scenario():
        with sandbox.admin.key_rate_limited(tenant.key_id, 1, burst=1):
            card = JobCard(client, gen)
            card.observe(lambda change: notes.append(change["new"]), names="rate_note")
            await until(lambda: card.status == "completed", timeout=40, what="the job's end")
        await aclose(client)
        return card

    card = run(scenario(), timeout=60)
    assert any(n.startswith("waiting for the rate limit (") and "× 429" in n for n in notes), notes
    assert card.rate_note == ""

"""The job card's actions and what follows a model switch, against the real sandbox: Save
writes the file and says where; "Use as reference" fills the next model's matching input; the
example never overwrites what the user typed or chose."""

from __future__ import annotations

from widget_loop import run, until

from mediagen.provenance._sidecar import SUFFIX as SIDECAR, sidecar_of
from mediagen.widgets import Studio
from mediagen.widgets._loop_client import aclose


def priced(studio: Studio) -> bool:
    return studio.estimate.status == "ready" and not studio.estimate.blocked_reason


async def finished_image(client, save_dir=".") -> tuple[Studio, object]:
    studio = Studio(client, debounce=0.02, save_dir=save_dir)
    await studio.ready
    studio.picker.value = "pixel-1"
    await until(lambda: priced(studio))
    studio.estimate.submit()
    card = await until(lambda: studio.cards and studio.cards[0])
    await card.task
    assert card.status == "completed"
    return studio, card


def test_save_writes_into_the_studio_folder_and_says_where(make_client, tenant, tmp_path):
    client = make_client(tenant)
    first, second = tmp_path / "renders", tmp_path / "elsewhere"

    async def scenario():
        studio, card = await finished_image(client, save_dir=first)
        assert card.save_dir == str(first.resolve())
        card._on_view_message(card, {"action": "save", "index": 0}, [])  # the Save click
        await until(lambda: card.notice.startswith("Saved") or card.error, what="the save")
        said_first = card.notice
        studio.save_folder = str(second)  # the user changes the studio's folder
        saved = await card.save(0)
        await aclose(client)
        return card, said_first, saved

    card, said_first, saved = run(scenario())
    assert card.error == ""
    [written] = [p for p in first.iterdir() if not p.name.endswith(SIDECAR)]
    assert sorted(first.iterdir()) == sorted([written, sidecar_of(written)])
    assert written.read_bytes() == card.result.outputs[0].local_path.read_bytes()
    assert said_first == f"Saved output 1 to {written.resolve()}"
    assert saved.parent == second.resolve()
    assert saved.read_bytes() == written.read_bytes()
    assert card.notice == f"Saved output 1 to {saved}"


def test_a_reference_fills_the_next_model_and_typed_text_survives_switches(make_client, tenant):
    client = make_client(tenant)

    async def scenario():
        studio, card = await finished_image(client)
        asset = card.items[0]["asset_id"]
        form = studio.form
        studio.picker.value = "voxa-tts"  # a model without image inputs: remembered for later
        card.use_as_reference(0)
        notice_on_speech = card.notice
        studio.picker.value = "vidra-2"
        form.values = {**form.values, "prompt": "my own words"}  # typed, as the view sends it
        form.mode = "image_to_video"
        on_image_to_video = dict(form.values)
        form.mode = "text_to_video"
        form.values = {**form.values, "tier": "1080p"}  # chosen by the user
        studio.picker.value = "pixel-1"
        studio.picker.value = "vidra-2"
        back_on_vidra = dict(form.values)
        await until(
            lambda: studio.estimate.status == "ready" and not studio.estimate.blocked_reason
        )
        form.reset()  # "Start from example": now, and only now, the example comes back
        after_reset = dict(form.values)
        await aclose(client)
        return asset, notice_on_speech, on_image_to_video, back_on_vidra, after_reset

    asset, notice, on_i2v, back, after_reset = run(scenario())
    assert notice == (
        "Output 1 is now a reference input. It will fill the image input of the next model or "
        "mode that takes one."
    )
    assert on_i2v["first_frame"] == asset, "the chosen image, not the example's sample"
    assert on_i2v["prompt"] == "my own words"
    assert back["prompt"] == "my own words"
    assert back["tier"] == "1080p"
    assert after_reset["prompt"] == "A red fox trotting through fresh snow at dawn, cinematic"
    assert after_reset["tier"] == "720p"


def test_use_as_reference_says_which_input_and_a_later_page_edit_keeps_it(make_client, tenant):
    client = make_client(tenant)

    async def scenario():
        studio, card = await finished_image(client)
        studio.picker.value = "vidra-2"
        studio.form.mode = "image_to_video"
        card.use_as_reference(0)  # the kernel sets First frame...
        said = card.notice
        # ...while the page, which has not seen that yet, sends the prompt the user typed
        studio.form._on_view_message(
            studio.form, {"action": "edit", "values": {"prompt": "typed", "gone": 1}}, []
        )
        await aclose(client)
        return studio, card, said

    studio, card, said = run(scenario())
    assert said == "Output 1 is now a reference input. It fills First frame of Vidra 2."
    assert studio.form.values["first_frame"] == card.items[0]["asset_id"]
    assert studio.form.values["prompt"] == "typed"
    assert "gone" not in studio.form.values, "a field this form does not have is ignored"
    assert studio.form.error == ""


def test_a_reference_stops_filling_new_models_once_a_request_used_it(make_client, tenant):
    client = make_client(tenant)

    async def scenario():
        studio, card = await finished_image(client)
        asset = card.items[0]["asset_id"]
        studio.picker.value = "vidra-2"
        studio.form.mode = "image_to_video"
        card.use_as_reference(0)
        await until(lambda: priced(studio))
        studio.estimate.submit()
        await until(lambda: len(studio.cards) == 2, what="the video's card")
        studio.picker.value = "pixel-1"  # reference images are optional here, and priced
        on_pixel = dict(studio.form.values)
        await until(lambda: all(c.status != "pending" for c in studio.cards))
        await aclose(client)
        return asset, studio.cards[0].request, on_pixel

    asset, video_request, on_pixel = run(scenario())
    assert video_request["first_frame"] == asset
    assert not on_pixel.get("reference_images"), "a used reference does not fill itself in"


def test_a_forecast_that_fails_leaves_the_estimate_and_no_unread_task_error(
    make_client, tenant, monkeypatch, caplog
):
    """A kernel shutting down refuses the worker thread that reads the history
    (``RuntimeError``): the forecast goes blank with a log line, the estimate stands, and
    asyncio has no "Task exception was never retrieved" to print at exit."""
    import gc

    from mediagen import history

    def refused(*args, **kwargs):
        raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    monkeypatch.setattr(history, "request_note", refused)
    client = make_client(tenant)

    async def scenario():
        studio = Studio(client, debounce=0.02)
        await studio.ready
        studio.picker.value = "pixel-1"
        await until(lambda: priced(studio))
        await until(lambda: "Forecasting the wait" in caplog.text, what="the forecast's failure")
        await aclose(client)
        return studio

    with caplog.at_level("WARNING"):
        studio = run(scenario())
        gc.collect()
    assert studio.forecast == ""
    assert priced(studio)
    assert studio.error == ""
    assert studio.estimate.error == ""
    assert "never retrieved" not in caplog.text

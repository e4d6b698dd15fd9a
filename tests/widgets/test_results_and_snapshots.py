"""Results come back into Python, and every widget leaves a useful static picture.

After a kernel restart, in nbconvert or on GitHub a widget's view is gone; what remains is the
display's other formats. Those must show what the widget showed (thumbnails, costs, ids), not
``<... object at 0x7f...>``. A new studio fills its gallery from the history, not only from
what this session made.
"""

from __future__ import annotations

import re

from widget_loop import run, until

from mediagen.widgets import Gallery, JobCard, MediaPlayer, Studio
from mediagen.widgets._loop_client import aclose

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
OBJECT_DUMP = re.compile(r"object at 0x[0-9a-f]+")


def bundle(widget) -> dict:
    data = widget._repr_mimebundle_()
    return data[0] if isinstance(data, tuple) else data


def test_a_new_studio_shows_past_generations_and_hands_results_back(make_client, tenant):
    client = make_client(tenant)
    earlier = [
        client.images.create(model="pixel-pro", prompt="a red kite", quality="low").wait(),
        client.images.create(model="pixel-pro", prompt="a red kite", quality="high").wait(),
        client.audio.create(model="voxa-tts", text="Hello", voice_name="Aria").wait(),
    ]
    client = make_client(tenant)  # same cache dir, so the same journal: a restarted kernel

    async def scenario():
        studio = Studio(client, debounce=0.02)
        await studio.ready
        assert studio.last is None, "nothing finished in this studio yet"
        studio.picker.value = "pixel-1"
        estimate = studio.estimate
        await until(lambda: estimate.status == "ready" and not estimate.blocked_reason)
        studio.estimate.submit()
        card = await until(lambda: studio.cards and studio.cards[0])
        await card.task
        await until(lambda: len(studio.gallery.entries) == 4)
        await aclose(client)
        return studio, card

    studio, card = run(scenario())
    assert studio.gallery.total == 4, "the gallery holds the history, not only this session"
    assert studio.last is card.result
    ids = [g.id for g in studio.generations]
    assert ids[0] == card.result.id
    assert set(ids) == {card.result.id, *(g.id for g in earlier)}
    # the two kites differ only in price-setting quality: the cards say so
    by_id = {e["id"]: e for e in studio.gallery.entries}
    assert by_id[earlier[0].id]["settings"] == {"quality": "low"}
    assert by_id[earlier[1].id]["settings"] == {"quality": "high"}
    assert "quality high" in by_id[earlier[1].id]["settings_text"]
    # a click on a card (the view sets selected_id) gives the generation back
    assert studio.gallery.selected is None
    studio.gallery.selected_id = earlier[2].id
    assert studio.gallery.selected.id == earlier[2].id
    assert studio.gallery.selected.outputs[0].local_path.is_file()

    # the static fallback: a one-line summary and an HTML picture of the same
    data = bundle(studio)
    assert WIDGET_VIEW in data
    assert not OBJECT_DUMP.search(data["text/plain"])
    assert data["text/plain"].startswith("mediagen studio: 4 generations")
    html = data["text/html"]
    for generation in [card.result, *earlier]:
        assert generation.id in html
    assert html.count("data:image/") >= 3, "image thumbnails are embedded"
    assert "quality high" in html
    assert "audio" in html

    gallery_data = bundle(studio.gallery)
    assert gallery_data["text/plain"] == "Gallery: 4 generations"
    assert earlier[0].id in gallery_data["text/html"]


def test_job_card_and_player_fallbacks_show_media_cost_and_id(make_client, tenant):
    client = make_client(tenant)
    done = client.images.create(model="pixel-1", prompt="a teapot").wait()
    client = make_client(tenant)

    async def scenario():
        card = JobCard(client, done)
        await card.task
        await aclose(client)
        return card

    card = run(scenario())
    data = bundle(card)
    assert WIDGET_VIEW in data
    assert data["text/plain"] == (
        f"Job {done.id}: pixel-1 completed, {done.credits_charged:g} credits"
    )
    assert done.id in data["text/html"]
    assert "data:image/" in data["text/html"]

    player = MediaPlayer.from_output(done.outputs[0])
    data = bundle(player)
    assert not OBJECT_DUMP.search(data["text/plain"])
    assert "data:image/" in data["text/html"]

    empty = bundle(Gallery())
    assert empty["text/plain"] == "Gallery: 0 generations"
    one = Gallery()
    one.add(done, [done.outputs[0].local_path])
    assert bundle(one)["text/plain"] == "Gallery: 1 generation"


def test_a_card_without_its_request_shows_the_size_and_length_of_what_was_made():
    made_elsewhere = {
        "id": "g1",
        "type": "video",
        "model": "vidra-2",
        "status": "completed",
        "prompt": "waves",
        "created_at": "2026-11-20T10:00:00Z",
        "credits_charged": 22.0,
        "outputs": [
            {"content_type": "video/mp4", "width": 1280, "height": 720, "duration_seconds": 5.0}
        ],
    }
    gallery = Gallery()
    gallery.add(made_elsewhere)
    assert gallery.entries[0]["settings_text"] == "size 1280x720 · 5 s"
    assert gallery.entries[0]["created_at"] == "2026-11-20T10:00:00Z", "its time, as given"
    assert gallery.generations == [made_elsewhere], "the JSON given, back as it was"
    gallery.add(made_elsewhere, request={"model": "vidra-2", "tier": "720p"})
    assert gallery.entries[0]["settings_text"] == "tier 720p", "the request, when known, wins"

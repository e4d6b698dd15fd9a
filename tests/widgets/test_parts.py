"""Widget behaviour that needs no service: picker filtering, form traits, tasks, HTML reprs."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import sys
from pathlib import Path

import pytest
from catalog_entries import IMAGE, SPEECH, VIDEO

from mediagen.display import _html
from mediagen.widgets import _tasks
from mediagen.widgets._media import make_item
from mediagen.widgets.form import RequestForm
from mediagen.widgets.picker import ModelPicker
from mediagen.widgets.player import MediaPlayer

sys.path.insert(0, str(Path(__file__).parents[1] / "ui"))
from media_files import make_mp4, make_png, make_wav


def test_picker_filters_by_kind_and_words_in_the_kernel():
    picker = ModelPicker([VIDEO, SPEECH, IMAGE])
    assert [o["id"] for o in picker.options] == ["vidra-2", "voxa-1", "pixa-1"]
    picker.kind = "audio"
    assert [o["id"] for o in picker.options] == ["voxa-1"]
    picker.kind, picker.query = "", "image video"
    assert [o["id"] for o in picker.options] == ["vidra-2"]  # matches a mode name and the type
    video = picker.options[0]
    assert video["price_summary"] == "8-16 credits per second"
    assert [m["name"] for m in video["modes"]] == ["Text to video", "Image to video"]
    assert video["tiers"] == ["720p", "1080p"]
    picker.value = "vidra-2"
    assert picker.entry["id"] == "vidra-2"
    with pytest.raises(Exception, match="kind must be one of"):
        picker.kind = "text"


def test_form_traits_follow_edits_and_give_the_request():
    form = RequestForm(VIDEO)
    assert form.mode == "text_to_video"
    assert form.request == {
        "model": "vidra-2",
        "mode": "text_to_video",
        "prompt": "a red fox",
        "tier": "720p",
        "duration_seconds": 5,
        "aspect_ratio": "16:9",
    }
    form.values = {**form.values, "duration_seconds": 10, "tier": "1080p"}  # as the view would
    assert "duration_seconds" in form.issues
    assert not form.valid
    form.set_value("duration_seconds", 5)
    assert form.issues == {}
    form.mode = "image_to_video"
    # the example fills the new mode, but the tier the user chose stays
    assert form.values == {"tier": "1080p", "duration_seconds": 5, "prompt": "it moves"}
    assert form.issues == {"first_frame": "First frame is required"}
    form.add_reference("asset_" + "a" * 24, "fox #1", "image")
    assert form.use_reference("asset_" + "a" * 24, "image") == "first_frame"
    assert form.request["first_frame"] == "asset_" + "a" * 24
    assert form.valid
    with pytest.raises(ValueError, match="no reference input for audio"):
        form.use_reference("asset_x", "audio")


def test_form_upload_without_a_client_says_so():
    form = RequestForm(IMAGE)
    answer, _ = form.upload({"field": "x", "name": "a.png", "type": "image/png"}, [b"123"])
    assert answer == {"ok": False}
    assert "Uploading needs a client" in form.error


def test_player_serves_only_registered_files(tmp_path):
    clip = make_mp4(tmp_path / "clip.mp4", seconds=1.0)
    player = MediaPlayer(clip)
    meta, buffers = player.media({"key": player.item["key"]}, [])
    assert meta == {"content_type": "video/mp4", "size": clip.stat().st_size}
    assert buffers == [clip.read_bytes()]
    assert "item" in player.keys
    assert not any(isinstance(v, bytes) for v in player.get_state().values())
    meta, buffers = player.media({"key": str(tmp_path / "clip.mp4")}, [])  # a path is not a key
    assert "not available" in meta["error"]
    assert buffers == []


def test_latest_discards_stale_answers():
    async def scenario():
        delivered, errors = [], []
        latest = _tasks.Latest(0.0, delivered.append, errors.append)

        release = asyncio.Event()

        async def slow():
            await release.wait()
            return "slow and stale"

        async def fresh():
            return "fresh"

        first = latest.schedule(slow)
        await asyncio.sleep(0)  # the slow request is under way
        await latest.schedule(fresh)
        release.set()  # the stale answer arrives after the fresh one
        with contextlib.suppress(asyncio.CancelledError):
            await first
        return delivered, errors

    assert asyncio.run(scenario()) == (["fresh"], [])


def test_spawn_reports_errors_and_runs_on_a_thread_without_a_loop():
    errors = []

    async def boom():
        raise RuntimeError("kaboom")

    handle = _tasks.spawn(boom(), reporter=errors.append)
    handle.result(timeout=5)
    assert [str(e) for e in errors] == ["kaboom"]


def test_html_reprs_embed_local_media_and_state_prices_as_given(tmp_path):
    png = make_png(tmp_path / "big.png", width=1024, height=512)
    wav = make_wav(tmp_path / "tone.wav", seconds=0.5)
    outputs = [
        {
            "url": "https://expired.example/x",
            "asset_id": "asset_1",
            "content_type": "image/png",
            "width": 1024,
            "height": 512,
            "local_path": str(png),
        },
        {
            "url": "https://expired.example/y",
            "asset_id": "asset_2",
            "content_type": "audio/wav",
            "duration_seconds": 0.5,
            "local_path": str(wav),
        },
    ]
    gen = {
        "id": "g1",
        "type": "image",
        "status": "completed",
        "model": "pixa-1",
        "prompt": "<b>fox</b>",
        "credits_charged": 12.5,
        "outputs": outputs,
    }
    page = _html.generation_html(gen)
    assert "&lt;b&gt;fox&lt;/b&gt;" in page
    assert "12.5 credits" in page
    assert "data:image/jpeg;base64," in page  # shrunk thumbnail, not the 1024 px original
    assert "expired.example" not in page
    audio = base64.b64encode(wav.read_bytes()).decode()
    assert f'<audio controls src="data:audio/wav;base64,{audio}"' in page
    failed = _html.generation_html(
        {
            "id": "g2",
            "status": "failed",
            "model": "m",
            "type": "video",
            "error": {"code": "safety", "message": "blocked"},
        }
    )
    assert "<code>safety</code> blocked" in failed
    estimate = _html.estimate_html(
        {
            "model": "m",
            "credits": 40,
            "credits_after_discount": 36,
            "discount_percent": 10,
            "balance": 20,
            "allowed": True,
            "can_afford": False,
            "billable_duration_seconds": 5,
        }
    )
    assert "36 credits" in estimate
    assert "cannot be submitted: balance too low" in estimate
    credits = _html.credits_html(
        {
            "balance": 880.25,
            "member_limit": {"limit": 500, "used": 120, "resets_at": "2026-12-01T00:00:00Z"},
        }
    )
    assert "880.25 credits" in credits
    assert "120 of 500 used" in credits
    assert "resets 2026-12-01T00:00:00Z" in credits


def test_html_video_from_local_copy(tmp_path):
    clip = make_mp4(tmp_path / "c.mp4", seconds=0.5)
    page = _html.output_html(
        {
            "content_type": "video/mp4",
            "local_path": str(clip),
            "width": 320,
            "height": 240,
            "duration_seconds": 0.5,
        }
    )
    assert '<video controls src="data:video/mp4;base64,' in page
    assert "320×240 · 0.5 s" in page
    missing = _html.output_html({"content_type": "video/mp4", "url": "https://x"})
    assert "no local copy yet" in missing


def test_media_items_never_expose_paths(tmp_path):
    item = make_item(make_png(tmp_path / "p.png"))
    assert str(tmp_path) not in str(item.describe())


def test_a_task_spawned_by_a_click_on_another_loop_can_be_awaited_from_a_cell():
    """ipykernel 7 can handle a comm message on another loop than a cell's ``await``."""
    import threading

    clicks = asyncio.new_event_loop()
    threading.Thread(target=clicks.run_forever, daemon=True).start()

    async def click():
        return _tasks.spawn(asyncio.sleep(0.05, result="done"))

    async def failing_click():
        async def fail():
            raise ValueError("refused")

        return _tasks.spawn(fail())

    handle = asyncio.run_coroutine_threadsafe(click(), clicks).result(10)
    failing = asyncio.run_coroutine_threadsafe(failing_click(), clicks).result(10)

    async def cell():
        with pytest.raises(ValueError, match="refused"):
            await failing
        return await handle

    try:
        assert asyncio.run(cell()) == "done"
    finally:
        clicks.call_soon_threadsafe(clicks.stop)


def test_a_blocking_clients_widget_calls_go_through_one_asyncio_twin_per_loop(tmp_path):
    """An httpx async client belongs to the loop that made it: each loop gets its own twin of
    the blocking client, made once; an AsyncClient given is used as it is."""
    import mediagen
    from mediagen.widgets._loop_client import aclose, on_loop

    client = mediagen.Client(api_key="mk_test", base_url="http://127.0.0.1:9", cache_dir=tmp_path)

    async def twins():
        first, again = on_loop(client), on_loop(client)
        await aclose(client)
        return first, again, on_loop(client)  # closed: the next call makes a new one

    async def given(aclient):
        found = on_loop(aclient)
        await aclose(aclient)  # not ours to close
        return found

    try:
        first, again, after_close = asyncio.run(twins())
        other_loop, _, _ = asyncio.run(twins())
        assert isinstance(first, mediagen.AsyncClient)
        assert first is again
        assert after_close is not first
        assert other_loop is not first
        aclient = client.to_async()
        assert asyncio.run(given(aclient)) is aclient
        assert not aclient._http.is_closed
        asyncio.run(aclient.aclose())
    finally:
        client.close()

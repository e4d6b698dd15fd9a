"""``AsyncClient``: the same flows as ``Client`` (shared code), run with ``asyncio.run``."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from client_helpers import Recorder, example, reserves_for

import mediagen

FAST = (0.02, 0.1)


def _aclient(sandbox, tenant, tmp_path, **options):
    options.setdefault("poll_interval", FAST)
    options.setdefault("cache_dir", tmp_path / "cache")
    return mediagen.AsyncClient(api_key=tenant.api_key, base_url=sandbox.base_url, **options)


def test_async_submit_wait_save_list_and_credits(sandbox, tenant, catalog, media, tmp_path):
    async def main():
        async with _aclient(sandbox, tenant, tmp_path) as client:
            asset = await client.uploads.upload(media["image"])
            request = example(catalog, "vidra-2", "image_to_video")
            request["first_frame"] = asset
            quote = await client.models.estimate_request(request)
            gen = await client.videos.create(**request)
            seen = []
            done = await client.generations.wait(gen, timeout=60, progress=seen.append)
            path = await done.outputs[0].save(tmp_path / "out")
            listed = [g.id async for g in client.generations.list(limit=1)]
            credits = await client.credits.get()
            models = await client.models.list(type="audio")
            return quote, done, path, listed, credits, models, seen

    quote, done, path, listed, credits, models, seen = asyncio.run(main())
    assert done.status == "completed"
    assert done.credits_charged == quote.credits_after_discount
    assert path.read_bytes()[4:8] == b"ftyp"
    assert listed == [done.id]
    assert credits.balance == round(1000 - done.credits_charged, 2)
    assert models
    assert all(m.type == "audio" for m in models)
    assert seen
    assert seen[-1].status == "completed"


def test_async_errors_are_the_same_exceptions(sandbox, tenant, catalog, tmp_path):
    asyncio.run(_run_errors(sandbox, tenant, catalog, tmp_path))


async def _run_errors(sandbox, tenant, catalog, tmp_path):
    async with _aclient(sandbox, tenant, tmp_path) as client:
        with pytest.raises(mediagen.NotFoundError):
            await client.generations.get(str(uuid.uuid4()))
        request = {**example(catalog, "vidra-2", "text_to_video"), "duration_seconds": 7}
        with pytest.raises(mediagen.ValidationError) as caught:
            await client.videos.create(**request, validate=False)
        assert caught.value.details
    bad = mediagen.AsyncClient(api_key="mgk_wrong", base_url=sandbox.base_url, journal=False)
    async with bad:
        with pytest.raises(mediagen.AuthenticationError):
            await bad.credits.get()


def test_async_dropped_submit_is_charged_once_and_wait_times_out(
    sandbox, tenant, catalog, tmp_path
):
    recorder = Recorder()

    async def main():
        http = httpx.AsyncClient(timeout=30, event_hooks=recorder.ahooks())
        async with _aclient(sandbox, tenant, tmp_path, http_client=http) as client:
            request = example(catalog, "pixel-1")
            dropped = await client.images.create(**{**request, "prompt": "a [[drop]]"})
            slow = await client.images.create(**{**request, "prompt": "b [[slow:30]]"})
            with pytest.raises(mediagen.WaitTimeoutError) as caught:
                await client.generations.wait(slow, timeout=0.2)
        await http.aclose()
        return dropped, slow, caught.value

    dropped, slow, error = asyncio.run(main())
    assert len(reserves_for(sandbox, tenant.org_id, dropped.id)) == 1
    assert recorder.count("POST", "/v1/images") == 3  # the dropped one twice, the slow one once
    assert slow.id in str(error)
    assert "may still complete" in str(error)


def test_async_watch_batch_and_resume(sandbox, tenant, catalog, tmp_path):
    journal = tmp_path / "journal.jsonl"

    async def submit_then_die():
        async with _aclient(sandbox, tenant, tmp_path, journal=journal) as client:
            request = example(catalog, "pixel-1")
            result = await client.submit_batch(
                [{**request, "prompt": f"{n} [[slow:0.5]]"} for n in range(4)],
                show_estimate=False,
            )
            finished = [g async for g in client.generations.watch(result.generations)]
            late = await client.images.create(**{**request, "prompt": "late [[slow:1]]"})
            return result, finished, late

    async def after_restart():
        async with _aclient(sandbox, tenant, tmp_path, journal=journal) as client:
            pending = client.generations.pending()
            resumed = await client.generations.resume(wait=True)
            return pending, resumed

    result, finished, late = asyncio.run(submit_then_die())
    assert all(item.ok for item in result)
    assert len(result) == 4
    assert sorted(g.id for g in finished) == sorted(g.id for g in result.generations)
    assert all(g.status == "completed" for g in finished)
    pending, resumed = asyncio.run(after_restart())
    assert [r["generation_id"] for r in pending] == [late.id]
    assert [g.id for g in resumed] == [late.id]
    assert resumed[0].status == "completed"


def test_to_async_keeps_the_settings(make_client, catalog):
    client = make_client()

    async def main():
        aclient = client.to_async()
        async with aclient:
            gen = await aclient.images.create(**example(catalog, "pixel-1"))
            return aclient, gen

    aclient, gen = asyncio.run(main())
    assert aclient.base_url == client.base_url
    assert aclient.cache_dir == client.cache_dir
    assert client.generations.get(gen.id).id == gen.id


def test_to_sync_is_a_blocking_client_of_the_same_account(sandbox, tenant, catalog, tmp_path):
    """Each client builds its twin (they are declared together); the blocking twin of an
    AsyncClient reads what the AsyncClient made, and is closed with it."""

    async def main():
        async with _aclient(sandbox, tenant, tmp_path) as aclient:
            gen = await aclient.images.create(**example(catalog, "pixel-1"))
            twin = aclient._sync_twin()
            return aclient, gen, twin, aclient.to_sync()

    aclient, gen, twin, other = asyncio.run(main())
    assert type(twin) is mediagen.Client
    assert type(other) is mediagen.Client
    assert twin is not other  # to_sync() makes a new one; the twin is kept for the flows
    assert other.base_url == aclient.base_url
    assert other.cache_dir == aclient.cache_dir
    assert other.generations.get(gen.id).id == gen.id
    assert twin._http.is_closed  # closed with the AsyncClient that made it
    other.close()


def test_one_async_client_serves_every_loop_that_awaits_it(sandbox, tenant, catalog, tmp_path):
    """A notebook awaits its cells on the kernel's loop and (ipykernel 7) a widget's click on a
    subshell's loop in another thread; a script may ``asyncio.run`` twice. The same
    ``AsyncClient`` answers on each, over connections of that loop, and once closed it is closed
    for every loop."""
    import threading

    client = _aclient(sandbox, tenant, tmp_path)
    asyncio.run(client.credits.get())  # connections opened, then that loop closed
    assert asyncio.run(client.credits.get()).balance == 1000

    home = asyncio.new_event_loop()
    thread = threading.Thread(target=home.run_forever, daemon=True)
    thread.start()
    try:
        # the first loop keeps its connections alive while another thread's loop submits
        on_home = asyncio.run_coroutine_threadsafe(client.credits.get(), home).result(30)

        async def beside() -> list:
            request = example(catalog, "pixel-1")
            made = await client.images.create(**request)
            done = await client.generations.wait(made, timeout=60)
            again = asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(client.generations.get(made.id), home)
            )
            return [done, await again, await client.credits.get()]

        done, seen_from_home, credits = asyncio.run(beside())
        assert on_home.balance == 1000
        assert done.status == "completed"
        assert seen_from_home.id == done.id
        assert credits.balance == round(1000 - done.credits_charged, 2)

        asyncio.run_coroutine_threadsafe(client.aclose(), home).result(30)
        for attempt in (lambda: asyncio.run(client.credits.get()),
                        lambda: asyncio.run_coroutine_threadsafe(
                            client.credits.get(), home).result(30)):  # fmt: skip
            with pytest.raises(RuntimeError, match="closed"):
                attempt()
    finally:
        home.call_soon_threadsafe(home.stop)
        thread.join(10)
        home.close()

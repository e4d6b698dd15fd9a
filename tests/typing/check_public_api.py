"""What an editor infers for the public API, checked by mypy (pyproject's ``files``).

Never run: every line states the exact type a call has, so a public method that returns
``Any`` again (or the wrong model) fails the type check. Async methods are checked awaited.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from typing_extensions import assert_type

import mediagen as mg
from mediagen.client._clients import AsyncGenerationList, GenerationList

#: what an AsyncClient's calls give: a generation whose methods return coroutines
AsyncGen = mg.Generation[mg.AsyncClient]


def blocking(client: mg.Client, gen: mg.Generation, requests: list[dict[str, Any]]) -> None:
    assert_type(client.images.create(model="pixel-1", prompt="a fox"), mg.Generation)
    assert_type(client.videos.create(model="reel-1", prompt="a fox"), mg.Generation)
    assert_type(client.audio.create(model="voice-1", text="hello"), mg.Generation)

    assert_type(client.generations.get("gen_1"), mg.Generation)
    assert_type(client.generations.list(status="completed"), GenerationList)
    assert_type(iter(client.generations.list()), Iterator[mg.Generation])
    assert_type(client.generations.wait(gen, timeout=60), mg.Generation)
    assert_type(client.generations.watch([gen]), Iterator[mg.Generation])
    assert_type(client.generations.pending(), list[dict[str, Any]])
    assert_type(client.generations.recover(), list[mg.Generation])
    assert_type(client.generations.resume(wait=True), list[mg.Generation])
    assert_type(client.generations.to_dataframe(), pd.DataFrame)
    assert_type(client.generations.list().to_dataframe(), pd.DataFrame)

    assert_type(client.models.list(type="image"), list[mg.ModelInfo])
    assert_type(client.models.get("pixel-1"), mg.ModelInfo)
    assert_type(client.models.estimate("pixel-1", n=2), mg.Estimate)
    assert_type(client.models.estimate_request({"model": "pixel-1"}), mg.Estimate)
    assert_type(client.models.estimate_many(requests), list[mg.Estimate])

    assert_type(client.credits.get(), mg.Credits)
    assert_type(client.credits.get(timeout=2), mg.Credits)
    ticket = client.uploads.create(filename="a.png", content_type="image/png", size_bytes=3)
    assert_type(ticket, mg.UploadTicket)
    assert_type(client.uploads.upload(b"abc", filename="a.png"), mg.Asset)

    assert_type(client.save(gen, "out"), list[Path])
    assert_type(client.save(gen, "out", timeout=5), list[Path])
    assert_type(client.submit_batch(requests), mg.BatchResult)
    assert_type(client.submit_batch(requests).generations, list[mg.Generation])
    assert_type(client.to_async(), mg.AsyncClient)


def blocking_models(client: mg.Client) -> None:
    """A blocking client's models act through it and return their values."""
    gen = client.images.create(model="pixel-1", prompt="a fox")
    assert_type(gen, mg.Generation[mg.Client])
    assert_type(gen.wait(timeout=60), mg.Generation)
    assert_type(gen.wait(timeout=60, download=False).outputs, list[mg.GenerationOutput])
    assert_type(gen.refresh(), mg.Generation)
    assert_type(gen.save("out"), list[Path])
    assert_type(gen.save("out", timeout=5), list[Path])
    assert_type(gen.raise_for_error(), mg.Generation)
    output = gen.outputs[0]
    assert_type(output, mg.GenerationOutput[mg.Client])
    assert_type(output.download(), Path)
    assert_type(output.download("out/fox.png"), Path)
    assert_type(output.save("out"), Path)
    assert_type(output.local_path, Path | None)
    for done in client.generations.watch([gen]):
        assert_type(done.wait(), mg.Generation)
    for item in client.submit_batch([]):
        if item.generation is not None:
            assert_type(item.generation.refresh(), mg.Generation)


async def awaited(
    client: mg.AsyncClient, gen: mg.Generation, requests: list[dict[str, Any]]
) -> None:
    assert_type(await client.images.create(model="pixel-1", prompt="a fox"), AsyncGen)
    assert_type(await client.videos.create(model="reel-1", prompt="a fox"), AsyncGen)
    assert_type(await client.audio.create(model="voice-1", text="hello"), AsyncGen)

    assert_type(await client.generations.get("gen_1"), AsyncGen)
    assert_type(client.generations.list(status="completed"), AsyncGenerationList)
    assert_type(client.generations.list().__aiter__(), AsyncIterator[AsyncGen])
    assert_type(await client.generations.wait(gen, timeout=60), AsyncGen)
    assert_type(client.generations.watch([gen]), AsyncIterator[AsyncGen])
    assert_type(client.generations.pending(), list[dict[str, Any]])
    assert_type(await client.generations.recover(), list[AsyncGen])
    assert_type(await client.generations.resume(wait=True), list[AsyncGen])
    assert_type(client.generations.to_dataframe(), pd.DataFrame)

    assert_type(await client.models.list(type="image"), list[mg.ModelInfo])
    assert_type(await client.models.get("pixel-1"), mg.ModelInfo)
    assert_type(await client.models.estimate("pixel-1", n=2), mg.Estimate)
    assert_type(await client.models.estimate_request({"model": "pixel-1"}), mg.Estimate)
    assert_type(await client.models.estimate_many(requests), list[mg.Estimate])

    assert_type(await client.credits.get(), mg.Credits)
    assert_type(await client.credits.get(timeout=2), mg.Credits)
    ticket = await client.uploads.create(filename="a.png", content_type="image/png", size_bytes=3)
    assert_type(ticket, mg.UploadTicket)
    assert_type(await client.uploads.upload(b"abc", filename="a.png"), mg.Asset)

    assert_type(await client.save(gen, "out"), list[Path])
    assert_type(await client.save(gen, "out", timeout=5), list[Path])
    assert_type(await client.submit_batch(requests), mg.BatchResult[mg.AsyncClient])
    assert_type(client.to_sync(), mg.Client)
    async for found in client.generations.list(max_items=1):
        assert_type(found, AsyncGen)
    async for done in client.generations.watch([gen]):
        assert_type(done, AsyncGen)


async def awaited_models(client: mg.AsyncClient) -> None:
    """An AsyncClient's models act through it: their methods return coroutines to await."""
    gen = await client.images.create(model="pixel-1", prompt="a fox")
    assert_type(gen, AsyncGen)
    assert_type(await gen.wait(timeout=60), AsyncGen)
    # coroutines, not just awaitables: they can run as tasks
    waiting = asyncio.create_task(gen.wait(timeout=60))
    assert_type(waiting, asyncio.Task[AsyncGen])
    assert_type(await gen.refresh(), AsyncGen)
    assert_type(await gen.save("out"), list[Path])
    assert_type(await gen.save("out", timeout=5), list[Path])
    assert_type(gen.raise_for_error(), AsyncGen)
    output = gen.outputs[0]
    assert_type(output, mg.GenerationOutput[mg.AsyncClient])
    assert_type(await output.download(), Path)
    assert_type(asyncio.create_task(output.download()), asyncio.Task[Path])
    assert_type(await output.download("out/fox.png"), Path)
    assert_type(await output.save("out"), Path)
    assert_type(await (await client.generations.get("gen_1")).refresh(), AsyncGen)
    async for found in client.generations.list(max_items=1):
        assert_type(await found.wait(), AsyncGen)
    for item in await client.submit_batch([]):
        if item.generation is not None:
            assert_type(await item.generation.refresh(), AsyncGen)
    assert_type((await client.submit_batch([])).generations, list[AsyncGen])

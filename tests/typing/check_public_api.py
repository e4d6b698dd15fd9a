"""What an editor infers for the public API, checked by mypy (pyproject's ``files``).

Never run: every line states the exact type a call has, so a public method that returns
``Any`` again (or the wrong model) fails the type check. Async methods are checked awaited.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from typing_extensions import assert_type

import mediagen as mg
from mediagen.client._async_resources import AsyncGenerationList
from mediagen.client._sync_resources import GenerationList


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
    ticket = client.uploads.create(filename="a.png", content_type="image/png", size_bytes=3)
    assert_type(ticket, mg.UploadTicket)
    assert_type(client.uploads.upload(b"abc", filename="a.png"), mg.Asset)

    assert_type(client.save(gen, "out"), list[Path])
    assert_type(client.submit_batch(requests), mg.BatchResult)
    assert_type(client.to_async(), mg.AsyncClient)


async def awaited(
    client: mg.AsyncClient, gen: mg.Generation, requests: list[dict[str, Any]]
) -> None:
    assert_type(await client.images.create(model="pixel-1", prompt="a fox"), mg.Generation)
    assert_type(await client.videos.create(model="reel-1", prompt="a fox"), mg.Generation)
    assert_type(await client.audio.create(model="voice-1", text="hello"), mg.Generation)

    assert_type(await client.generations.get("gen_1"), mg.Generation)
    assert_type(client.generations.list(status="completed"), AsyncGenerationList)
    assert_type(client.generations.list().__aiter__(), AsyncIterator[mg.Generation])
    assert_type(await client.generations.wait(gen, timeout=60), mg.Generation)
    assert_type(client.generations.watch([gen]), AsyncIterator[mg.Generation])
    assert_type(client.generations.pending(), list[dict[str, Any]])
    assert_type(await client.generations.recover(), list[mg.Generation])
    assert_type(await client.generations.resume(wait=True), list[mg.Generation])
    assert_type(client.generations.to_dataframe(), pd.DataFrame)

    assert_type(await client.models.list(type="image"), list[mg.ModelInfo])
    assert_type(await client.models.get("pixel-1"), mg.ModelInfo)
    assert_type(await client.models.estimate("pixel-1", n=2), mg.Estimate)
    assert_type(await client.models.estimate_request({"model": "pixel-1"}), mg.Estimate)
    assert_type(await client.models.estimate_many(requests), list[mg.Estimate])

    assert_type(await client.credits.get(), mg.Credits)
    ticket = await client.uploads.create(filename="a.png", content_type="image/png", size_bytes=3)
    assert_type(ticket, mg.UploadTicket)
    assert_type(await client.uploads.upload(b"abc", filename="a.png"), mg.Asset)

    assert_type(await client.save(gen, "out"), list[Path])
    assert_type(await client.submit_batch(requests), mg.BatchResult)
    assert_type(client.to_sync(), mg.Client)
    async for found in client.generations.list(max_items=1):
        assert_type(found, mg.Generation)
    async for done in client.generations.watch([gen]):
        assert_type(done, mg.Generation)

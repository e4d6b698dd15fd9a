"""Helpers for the client's tests: real media files, catalog examples, request recording.

Request bodies come from the catalog's ``example_request`` (read over ``GET /v1/models``), with
their asset placeholders (``asset_example_image`` ...) swapped for assets really uploaded, so
these tests follow the catalog instead of hard-coding its models.
"""

from __future__ import annotations

import math
import struct
import threading
import time
import wave
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

PLACEHOLDER_PREFIXES = ("asset_example_", "generation_example_")


# --- media files ----------------------------------------------------------------------------


def make_png(path: Path, width: int = 96, height: int = 64) -> Path:
    from PIL import Image

    Image.new("RGB", (width, height), (40, 120, 200)).save(path)
    return path


def make_wav(path: Path, seconds: float = 1.0, rate: int = 16000) -> Path:
    samples = (
        int(12000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(int(seconds * rate))
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", s) for s in samples))
    return path


def make_mp4(path: Path, seconds: float = 1.0, width: int = 160, height: int = 96) -> Path:
    import av
    import numpy as np

    fps = 24
    with av.open(str(path), "w", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        x = np.linspace(0, 255, width, dtype=np.uint8)
        for index in range(round(seconds * fps)):
            frame = np.zeros((height, width, 3), dtype=np.uint8)
            frame[..., 0] = np.roll(x, index * 4)[None, :]
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def make_sparse_wav(path: Path, size: int) -> Path:
    """A valid silent 16-bit mono WAV of exactly ``size`` bytes, sparse on disk (zeros)."""
    data_size = size - 44
    rate = 16000
    header = b"RIFF" + struct.pack("<I", size - 8) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
    header += b"data" + struct.pack("<I", data_size)
    with open(path, "wb") as handle:
        handle.write(header)
        handle.truncate(size)
    return path


# --- catalog examples -----------------------------------------------------------------------


def fill_placeholders(value: Any, assets: Mapping[str, str]) -> Any:
    """Swap ``asset_example_<media>[_n]`` / ``generation_example_<kind>`` for real ids."""
    if isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIXES):
        for media in ("image", "video", "audio"):
            if media in value:
                key = "generation_" + media if value.startswith("generation_") else media
                return assets[key]
        raise KeyError(f"no asset for placeholder {value!r}")
    if isinstance(value, Mapping):
        return {k: fill_placeholders(v, assets) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_placeholders(v, assets) for v in value]
    return value


def has_placeholder(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith(PLACEHOLDER_PREFIXES)
    if isinstance(value, Mapping):
        return any(has_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(has_placeholder(v) for v in value)
    return False


def example(catalog: Mapping[str, dict], model_id: str, mode: str | None = None) -> dict:
    """The catalog's ready-to-send request of ``model_id`` (first mode unless ``mode``)."""
    examples = catalog[model_id]["example_request"]
    mode = mode or next(iter(examples))
    return dict(examples[mode])


def kind_of(catalog: Mapping[str, dict], model_id: str) -> str:
    return catalog[model_id]["type"]


# --- recording what the client sends ---------------------------------------------------------


@dataclass
class Sent:
    """One request as sent; ``headers`` without the Authorization value (``auth`` says if any)."""

    method: str
    url: str
    path: str
    headers: dict[str, str]
    auth: bool
    at: float
    status: int | None = None
    answered_at: float | None = None


@dataclass
class Recorder:
    """httpx event hooks that record every request the client sends (and its status)."""

    sent: list[Sent] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_request(self, request: httpx.Request) -> None:
        with self._lock:
            headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
            self.sent.append(
                Sent(
                    request.method,
                    str(request.url),
                    request.url.path,
                    headers,
                    "authorization" in request.headers,
                    time.monotonic(),
                )
            )

    def on_response(self, response: httpx.Response) -> None:
        with self._lock:
            for item in reversed(self.sent):
                if item.url == str(response.request.url) and item.status is None:
                    item.status = response.status_code
                    item.answered_at = time.monotonic()
                    break

    async def aon_request(self, request: httpx.Request) -> None:
        self.on_request(request)

    async def aon_response(self, response: httpx.Response) -> None:
        self.on_response(response)

    def hooks(self) -> dict[str, list]:
        return {"request": [self.on_request], "response": [self.on_response]}

    def ahooks(self) -> dict[str, list]:
        return {"request": [self.aon_request], "response": [self.aon_response]}

    def count(self, method: str, path: str | None = None, prefix: str | None = None) -> int:
        return sum(
            1
            for s in self.sent
            if s.method == method
            and (path is None or s.path == path)
            and (prefix is None or s.path.startswith(prefix))
        )

    def clear(self) -> None:
        with self._lock:
            self.sent.clear()


def ledger_entries(sandbox: Any, org_id: str) -> list[dict]:
    return list(sandbox.admin.ledger(org_id)["entries"])


def reserves_for(sandbox: Any, org_id: str, generation_id: str) -> list[dict]:
    return [
        e
        for e in ledger_entries(sandbox, org_id)
        if e.get("generation_id") == generation_id and e.get("kind") == "reserve"
    ]

"""Real media files for browser tests, made on the spot (PyAV, Pillow, stdlib wave)."""

from __future__ import annotations

import math
import struct
import wave
from pathlib import Path

import av
import numpy as np
from PIL import Image


def make_mp4(
    path: Path, *, seconds: float = 2.0, width: int = 320, height: int = 240, fps: int = 24
) -> Path:
    """An H.264 MP4 of ``seconds`` (a moving gradient)."""
    with av.open(str(path), "w", options={"movflags": "+faststart"}) as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"preset": "ultrafast"}
        x = np.linspace(0, 255, width, dtype=np.uint8)
        for index in range(round(seconds * fps)):
            frame = np.zeros((height, width, 3), dtype=np.uint8)
            frame[..., 0] = np.roll(x, index * 4)[None, :]
            frame[..., 2] = 255 - frame[..., 0]
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def make_png(path: Path, *, width: int = 300, height: int = 200) -> Path:
    Image.new("RGB", (width, height), (40, 120, 200)).save(path)
    return path


def make_wav(path: Path, *, seconds: float = 1.5, rate: int = 22050) -> Path:
    """A 440 Hz tone of ``seconds``."""
    samples = (
        int(12000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(int(seconds * rate))
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<h", s) for s in samples))
    return path

"""How long a widget's snapshot takes to draw again, on the kernel's loop, as the widget changes.

A displayed widget's snapshot output follows its state (``mediagen.widgets._live_snapshot``):
after each burst of changes it is drawn again and compared with the one sent. This times that
drawing for a gallery of 48 image generations (1024x1024 PNGs of noise, the worst case for the
encoder; the snapshot shows 12 of them as thumbnails): the first drawing, which makes the
thumbnails, and the ones after it, which find them made (kept per file version). Printed: the
medians in milliseconds, their ratio, and the snapshot's size.

    python benchmarks/bench_snapshot.py [--repeats 20]

Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from mediagen.display import _html
from mediagen.widgets import Gallery
from mediagen.widgets._live_snapshot import LiveSnapshot

GENERATIONS = 48


def gallery_of_images(folder: Path) -> Gallery:
    gallery = Gallery()
    noise = np.random.default_rng(0)
    for n in range(GENERATIONS):
        path = folder / f"{n}.png"
        Image.fromarray(noise.integers(0, 256, (1024, 1024, 3), dtype=np.uint8)).save(path)
        output = {"content_type": "image/png", "width": 1024, "height": 1024,
                  "local_path": str(path)}  # fmt: skip
        made = {"id": f"gen_{n}", "type": "image", "model": "pixel-1", "status": "completed",
                "prompt": f"take {n}", "created_at": f"2026-11-20T10:{n:02d}:00Z",
                "credits_charged": 1.0, "outputs": [output]}  # fmt: skip
        gallery.add(made)
    return gallery


def timed(draw) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    draw()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mediagen-bench-snapshot-") as folder:
        live = LiveSnapshot(gallery_of_images(Path(folder)))
        first = []
        for _ in range(max(3, args.repeats // 4)):
            _html._thumbnail_of.cache_clear()
            first.append(timed(live.bundle))
        again = [timed(live.bundle) for _ in range(args.repeats)]
        size = len(live.bundle()["text/html"])
    cold, warm = statistics.median(first), statistics.median(again)
    print(f"snapshot of {GENERATIONS} image generations ({size / 1024:.0f} KiB of HTML)")
    print(f"  first drawing (thumbnails made):   {cold:8.1f} ms")
    print(f"  drawn again (thumbnails kept):     {warm:8.1f} ms   ratio {warm / cold:.4f}")


if __name__ == "__main__":
    main()

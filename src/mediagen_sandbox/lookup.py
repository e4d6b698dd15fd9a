"""What the catalog's validation may ask the server: assets and source generations.

Both are scoped to the caller's organization: another organization's asset id or generation id
is simply unknown. The catalog's example placeholders (``asset_example_image``,
``generation_example_video``, ...) are sample media every organization can use, so each
``example_request`` is accepted exactly as the catalog shows it.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterable
from pathlib import Path

from .catalog import ASSET_PLACEHOLDER_PREFIX, GENERATION_PLACEHOLDER, AssetRef, SourceGeneration
from .db import assets as asset_rows, generations as generation_rows
from .db.store import Store
from .media import extension_for, probe, render
from .media.spec import OutputSpec

SAMPLES = {
    "image": OutputSpec(
        media="image", content_type="image/png", width=640, height=480, text="sample"
    ),
    "video": OutputSpec(
        media="video", content_type="video/mp4", width=320, height=180, duration_seconds=2.0,
        with_audio=True, text="sample",
    ),
    "audio": OutputSpec(
        media="audio", content_type="audio/wav", duration_seconds=3.0, audio_kind="music"
    ),
}  # fmt: skip
_samples_lock = threading.Lock()


@functools.lru_cache(maxsize=64)
def sample_asset(data_dir: Path, asset_id: str) -> AssetRef | None:
    """The sample behind an example placeholder (rendered and probed once per data dir), or
    None."""
    media = asset_id[len(ASSET_PLACEHOLDER_PREFIX) :].split("_")[0]
    spec = SAMPLES.get(media)
    if spec is None:
        return None
    variant = asset_id[len(ASSET_PLACEHOLDER_PREFIX) + len(media) :].strip("_") or "1"
    path = data_dir / "samples" / f"{media}-{variant}{extension_for(spec.content_type)}"
    with _samples_lock:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            render(spec if variant == "1" else _variant(spec, variant), str(path))
    found = probe(str(path), spec.content_type)
    return AssetRef(
        asset_id=asset_id,
        media=media,
        ready=True,
        path=str(path),
        content_type=found.content_type,
        width=found.width,
        height=found.height,
        duration_seconds=found.duration_seconds,
    )


def _variant(spec: OutputSpec, variant: str) -> OutputSpec:
    import dataclasses

    return dataclasses.replace(spec, text=f"sample {variant}", seed=len(variant) * 7919)


class OrgLookup:
    def __init__(self, store: Store, org_id: str) -> None:
        self.store = store
        self.org_id = org_id
        self._assets: dict[str, AssetRef | None] = {}

    @property
    def data_dir(self) -> Path:
        return Path(self.store.path).parent

    def asset(self, asset_id: str) -> AssetRef | None:
        if not isinstance(asset_id, str):
            return None
        if asset_id not in self._assets:
            self.assets([asset_id])
        return self._assets.get(asset_id)

    def assets(self, asset_ids: Iterable[str]) -> dict[str, AssetRef]:
        """Every one of ``asset_ids`` this organization has, looked up in one query (a body
        naming the same id thousands of times costs one lookup, not thousands)."""
        wanted = {a for a in asset_ids if isinstance(a, str) and a not in self._assets}
        for asset_id in wanted:
            self._assets[asset_id] = None
            if asset_id.startswith(ASSET_PLACEHOLDER_PREFIX):
                self._assets[asset_id] = sample_asset(self.data_dir, asset_id)
        stored = sorted(a for a in wanted if not a.startswith(ASSET_PLACEHOLDER_PREFIX))
        for row in asset_rows.of_org(self.store, self.org_id, stored):
            ready = row["status"] == "ready"
            self._assets[row["id"]] = AssetRef(
                asset_id=row["id"],
                media=row["media"],
                ready=ready,
                path=row["path"] if ready else None,
                content_type=row["content_type"],
                width=row["width"],
                height=row["height"],
                duration_seconds=row["duration_seconds"],
            )
        return {a: ref for a in asset_ids if (ref := self._assets.get(a)) is not None}

    def generation(self, generation_id: str) -> SourceGeneration | None:
        if not isinstance(generation_id, str):
            return None
        if generation_id == GENERATION_PLACEHOLDER:
            video = sample_asset(self.data_dir, ASSET_PLACEHOLDER_PREFIX + "video")
            return SourceGeneration(
                id=generation_id,
                type="video",
                status="completed",
                model="vidra-2",
                duration_seconds=video.duration_seconds,
                width=video.width,
                height=video.height,
                output_paths=[video.path],
            )
        row = generation_rows.source_of_org(self.store, self.org_id, generation_id)
        if row is None:
            return None
        outputs = json.loads(row["outputs_json"]) if row["outputs_json"] else []
        paths: list[str] = []
        duration = width = height = None
        for out in outputs:
            if path := asset_rows.path(self.store, out["asset_id"]):
                paths.append(path)
        if outputs:
            duration = outputs[0].get("duration_seconds")
            width = outputs[0].get("width")
            height = outputs[0].get("height")
        return SourceGeneration(
            id=row["id"],
            type=row["type"],
            status=row["status"],
            model=row["model"],
            duration_seconds=duration,
            width=width,
            height=height,
            output_paths=paths,
        )

    def interaction(self, interaction_id: str) -> SourceGeneration | None:
        found = generation_rows.by_interaction(self.store, self.org_id, interaction_id)
        return self.generation(found) if found is not None else None

"""``JobCard``: one submitted generation, watched in the background until it ends.

Shows status, elapsed time, the credits reserved at submit and then charged, the error code and
message on failure, and on completion an inline player per output (a grid for several images)
with "use as reference", "save" and "download" actions. Polling runs as a task on the kernel's
loop.

Save writes into ``save_dir`` on the kernel's machine (the studio's folder setting) and says
where; Download hands the same bytes to the browser, for a kernel the user cannot reach by file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import traitlets

from mediagen.display import _html
from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._media import MediaItem, MediaSource
from mediagen.widgets._outputs import item_at
from mediagen.widgets._service import Service
from mediagen.widgets._snapshot import StaticFallback, generations_html, price_settings
from mediagen.wire._fields import read_field

Finished = Callable[[Any], None]
Reference = Callable[[str, str, str], "str | None"]  # (asset_id, label, kind) -> where it went


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def generation_summary(generation: Any) -> dict[str, Any]:
    """The JSON-safe facts a card or the gallery shows about a generation."""
    error = read_field(generation, "error")
    return {
        "id": read_field(generation, "id"),
        "type": read_field(generation, "type"),
        "model": read_field(generation, "model"),
        "mode": read_field(generation, "mode"),
        "status": read_field(generation, "status"),
        "prompt": read_field(generation, "prompt") or "",
        "created_at": _iso(read_field(generation, "created_at")),
        "completed_at": _iso(read_field(generation, "completed_at")),
        "credits_charged": read_field(generation, "credits_charged"),
        "error": {"code": read_field(error, "code"), "message": read_field(error, "message")}
        if error
        else None,
    }


class JobCard(StaticFallback, MediaSource, MediagenWidget):
    _module = "job.js"

    generation = traitlets.Dict().tag(sync=True)
    reserved = traitlets.Float(None, allow_none=True).tag(sync=True)
    items = traitlets.List(traitlets.Dict()).tag(sync=True)
    notice = traitlets.Unicode("").tag(sync=True)
    #: where Save writes (shown next to the button, so the user knows before clicking)
    save_dir = traitlets.Unicode("").tag(sync=True)
    #: how long this model usually takes for this user, in seconds (None: no history yet)
    expected_s = traitlets.Float(None, allow_none=True).tag(sync=True)

    def __init__(
        self,
        service: Service,
        generation: Any,
        *,
        reserved: float | None = None,
        request: dict[str, Any] | None = None,
        watch: bool = True,
        save_dir: str | Path = ".",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.save_dir = str(Path(save_dir).expanduser().resolve())
        self.service = service
        self.result: Any = generation
        #: the request body as submitted (None for a card re-attached after a restart)
        self.request = request
        self.outputs: list[Any] = []
        self._listeners: list[Finished] = []
        self._reference_listeners: list[Reference] = []
        self.generation = generation_summary(generation)
        self.reserved = reserved
        if self.status == "pending":
            self.expected_s = service.expected_seconds(self.generation.get("model"))
        self.on_msg(self._on_view_message)
        self.task: _tasks.Handle | None = None
        if watch:
            self.task = _tasks.spawn(self.watch(), reporter=self._watch_failed)

    @property
    def status(self) -> str:
        """The job's status as last polled (``pending``, ``completed``, ``failed``)."""
        return self.generation.get("status", "")

    def on_finished(self, callback: Finished) -> None:
        """Call ``callback(generation)`` once, when the job completes or fails."""
        self._listeners.append(callback)

    def on_reference(self, callback: Reference) -> None:
        """Call ``callback(asset_id, label, kind)`` when the user picks "use as reference"."""
        self._reference_listeners.append(callback)

    # -- watching --------------------------------------------------------------------------

    async def watch(self) -> Any:
        """Follow the generation until it is terminal, then show its outputs' local copies."""
        started = time.monotonic()

        def update(generation: Any) -> None:
            self.result = generation
            self.generation = generation_summary(generation)

        generation = await self.service.wait(self.result, on_update=update)
        self.result = generation
        if read_field(generation, "status") == "completed":
            await self._load_outputs(generation)
        self.generation = {
            **generation_summary(generation),
            "watched_s": time.monotonic() - started,
        }
        for callback in self._listeners:
            with self.reporting("After the job finished"):
                callback(generation)
        return generation

    async def _load_outputs(self, generation: Any) -> None:
        items: list[MediaItem] = []
        self.outputs = list(read_field(generation, "outputs") or [])
        for index, output in enumerate(self.outputs):
            path = await self.service.local_copy(output)
            item = item_at(path, output, f"{self.generation.get('model')} #{index + 1}")
            self.register_media(item)
            items.append(item)
        self.items = [
            {
                **item.describe(),
                "asset_id": read_field(output, "asset_id"),
                # the name Save gives the file, so a download is called the same
                "filename": Path(read_field(output, "filename") or item.path.name).name,
            }
            for item, output in zip(items, self.outputs, strict=True)
        ]

    def _watch_failed(self, exc: BaseException) -> None:
        self.report(exc, context="Watching the job failed")

    # -- actions ---------------------------------------------------------------------------

    def use_as_reference(self, index: int) -> None:
        """Offer output ``index`` to the reference inputs (chaining into the next request)."""
        item = self.items[index]
        if not item.get("asset_id"):
            raise ValueError("this output has no asset id, so it cannot be used as a reference")
        said = [
            callback(item["asset_id"], item["label"], item["kind"])
            for callback in self._reference_listeners
        ]
        self.notice = " ".join(
            [f"Output {index + 1} is now a reference input.", *filter(None, said)]
        )

    def save(self, index: int, directory: str | Path | None = None) -> _tasks.Handle:
        """Save output ``index`` into ``directory`` (default :attr:`save_dir`), in the background.

        The client's streamed, atomic save; ``notice`` then says where the file is. Await the
        returned handle for the path.
        """
        output = self.outputs[index]
        target = Path(directory or self.save_dir).expanduser()
        self.notice = f"Saving output {index + 1} to {target}…"

        async def run() -> Path:
            path = (await self.service.save(output, target)).resolve()
            self.notice = f"Saved output {index + 1} to {path}"
            return path

        return _tasks.spawn(run(), reporter=self._save_failed)

    def _save_failed(self, exc: BaseException) -> None:
        self.notice = ""
        self.report(exc, context="Save")

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        action, index = str(content.get("action")), content.get("index")
        if not isinstance(index, (int, float, str)):
            return
        with self.reporting({"reference": "Use as reference", "save": "Save"}.get(action, "")):
            if action == "reference":
                self.use_as_reference(int(index))
            elif action == "save":
                self.save(int(index))

    # -- static fallback -------------------------------------------------------------------

    def snapshot_text(self) -> str:
        gen = self.generation
        charged = gen.get("credits_charged")
        cost = f", {_html.credits_text(charged)} credits" if charged is not None else ""
        return f"Job {gen.get('id')}: {gen.get('model')} {gen.get('status')}{cost}"

    def snapshot_html(self) -> str:
        settings = {self.generation.get("id") or "": price_settings(self.request)}
        return generations_html(self.snapshot_text(), [self.result], settings)

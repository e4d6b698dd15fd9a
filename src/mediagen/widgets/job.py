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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import traitlets

from mediagen.display import _html
from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._loop_client import on_loop
from mediagen.widgets._media import MediaItem, MediaSource
from mediagen.widgets._outputs import credentials, fetched, item_at, saved
from mediagen.widgets._rate_note import noting_the_rate
from mediagen.widgets._snapshot import StaticFallback, generations_html, price_settings

if TYPE_CHECKING:
    from mediagen.client import AsyncClient, Client, Generation, GenerationOutput

Finished = Callable[["Generation[Any]"], None]
Reference = Callable[[str, str, str], "str | None"]  # (asset_id, label, kind) -> where it went


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def generation_summary(generation: Generation[Any] | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-safe facts a card or the gallery shows about a generation.

    A generation given as its JSON (made elsewhere, read from a file) is read as the client
    reads it, but keeps its times as the text it came with: the view parses either, and the
    gallery orders its cards by that text.
    """
    if isinstance(generation, Mapping):
        from mediagen.client import Generation

        return {
            **generation_summary(Generation.from_dict(generation)),
            "created_at": _iso(generation.get("created_at")),
            "completed_at": _iso(generation.get("completed_at")),
        }
    error = generation.error
    return {
        "id": generation.id,
        "type": generation.type,
        "model": generation.model,
        "mode": generation.mode,
        "status": generation.status,
        "prompt": generation.prompt or "",
        "created_at": _iso(generation.created_at),
        "completed_at": _iso(generation.completed_at),
        "credits_charged": generation.credits_charged,
        "error": {"code": error.code, "message": error.message} if error else None,
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
    #: while the key's rate limit holds this job's polls: "waiting for the rate limit" and the
    #: pace held (empty otherwise), so a held job does not read as a frozen one
    rate_note = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        client: Client | AsyncClient,
        generation: Generation[Any],
        *,
        reserved: float | None = None,
        request: dict[str, Any] | None = None,
        watch: bool = True,
        save_dir: str | Path = ".",
        poll_interval: float | tuple[float, float] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.save_dir = str(Path(save_dir).expanduser().resolve())
        self.client = client
        #: how the card polls: a number, or (start, cap) it backs off to; None: as the client
        #: is configured to (``Client(poll_interval=...)``, 2 s -> 5 s by default: the spec's
        #: interval, which counts against the key's rate limit)
        self.poll_interval = poll_interval
        self.result: Generation[Any] = generation
        #: the request body as submitted (None for a card re-attached after a restart)
        self.request = request
        self.outputs: list[GenerationOutput[Any]] = []
        self._listeners: list[Finished] = []
        self._reference_listeners: list[Reference] = []
        self.generation = generation_summary(generation)
        self.reserved = reserved
        if self.status == "pending":
            from mediagen import history  # how long this model usually takes, for this user

            self.expected_s = history.expected_seconds(client, generation.model)
        self.on_msg(self._on_view_message)
        self.task: _tasks.Handle | None = None
        if watch:
            self.task = _tasks.spawn(self.watch(), reporter=self._watch_failed)

    @property
    def status(self) -> str:
        """The job's status as last polled (``pending``, ``completed``, ``failed``)."""
        status: str = self.generation.get("status", "")
        return status

    def on_finished(self, callback: Finished) -> None:
        """Call ``callback(generation)`` once, when the job completes or fails."""
        self._listeners.append(callback)

    def on_reference(self, callback: Reference) -> None:
        """Call ``callback(asset_id, label, kind)`` when the user picks "use as reference"."""
        self._reference_listeners.append(callback)

    # -- watching --------------------------------------------------------------------------

    async def watch(self) -> Generation[AsyncClient]:
        """Follow the generation until it is terminal, then show its outputs' local copies.

        The client's own wait: it journals the end state (so a restarted kernel does not
        re-attach to a finished job) and caches the outputs.
        """
        started = time.monotonic()

        def update(generation: Generation[AsyncClient]) -> None:
            self.result = generation
            self.generation = generation_summary(generation)

        client = on_loop(self.client)
        waiting = client.generations.wait(
            self.result, on_update=update, poll_interval=self.poll_interval
        )
        generation = await noting_the_rate(client, waiting, self._show_rate)
        self.result = generation
        if generation.completed:
            await self._load_outputs(generation)
        self.generation = {
            **generation_summary(generation),
            "watched_s": time.monotonic() - started,
        }
        for callback in self._listeners:
            with self.reporting("After the job finished"):
                callback(generation)
        return generation

    async def _load_outputs(self, generation: Generation[Any]) -> None:
        items: list[tuple[MediaItem, dict[str, Any] | None]] = []
        self.outputs = list(generation.outputs)
        for index, output in enumerate(self.outputs):
            path = await fetched(output)
            item = item_at(path, output, f"{self.generation.get('model')} #{index + 1}")
            self.register_media(item)
            items.append((item, await credentials(path)))
        self.items = [
            {
                **item.describe(),
                "asset_id": output.asset_id,
                # the name Save gives the file, so a download is called the same
                "filename": Path(output.filename or item.path.name).name,
                "credentials": found,
            }
            for (item, found), output in zip(items, self.outputs, strict=True)
        ]

    def _show_rate(self, note: str) -> None:
        self.rate_note = note

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
            path = (await saved(output, target)).resolve()
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

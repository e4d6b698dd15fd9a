"""``RequestForm``: the request for one model and mode, built from its catalog entry.

The kernel decides everything (which control, which choices for the current tier, what is
wrong); the view renders ``fields`` and sends the fields the user edited, which the kernel
merges into ``values``. ``form.request`` is the request dict; ``form.issues`` what would be
refused, shown inline before anything is sent.
Reference inputs take a previous output (``use_reference``, for chaining) or a local file the
user picks in the browser: its bytes come to the kernel as a message buffer (never as widget
state) and are uploaded by ``uploader``.

What the user typed or chose outlives a model switch: the form remembers it (and the outputs
picked as references) and a newly loaded model or mode starts from the example only where the
user gave nothing. Only "Start from example" (:meth:`reset`) puts the whole example back.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import traitlets
from anywidget.experimental import command

from mediagen.widgets import _form_spec as spec, _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._media import media_kind
from mediagen.widgets._snapshot import StaticFallback

#: (filename, content_type, data) -> asset id of the uploaded file
Uploader = Callable[[str, str, bytes], Awaitable[str]]


class RequestForm(StaticFallback, MediagenWidget):
    _module = "form.js"

    chosen_model = traitlets.Unicode("").tag(sync=True)  # not `model_id`: a Widget property
    model_name = traitlets.Unicode("").tag(sync=True)
    mode = traitlets.Unicode("").tag(sync=True)
    modes = traitlets.List(traitlets.Dict()).tag(sync=True)
    fields = traitlets.List(traitlets.Dict()).tag(sync=True)
    values = traitlets.Dict().tag(sync=True)
    issues = traitlets.Dict().tag(sync=True)
    references = traitlets.List(traitlets.Dict()).tag(sync=True)
    uploading = traitlets.Unicode("").tag(sync=True)
    # names this form on the page: its view announces each edit under it, for the estimate
    # views of this form to show a priced choice's price before the kernel answers
    token = traitlets.Unicode().tag(sync=True)

    @traitlets.default("token")
    def _new_token(self) -> str:
        return uuid.uuid4().hex

    def __init__(
        self, entry: Mapping[str, Any] | None = None, *, uploader: Uploader | None = None, **kw: Any
    ) -> None:
        self._entry: dict[str, Any] | None = None
        self._given: dict[str, Any] = {}  # field -> what the user typed or chose
        self._chosen: dict[str, str] = {}  # media kind -> asset id picked as the reference
        self._loading = False
        self.uploader = uploader
        #: the id of the view's last edit applied here (the view waits for it: ``on_edit_applied``)
        self.last_edit: str | None = None
        self._edit_listeners: list[Callable[[str | None], None]] = []
        super().__init__(**kw)
        self.on_msg(self._on_view_message)
        if entry is not None:
            self.load(entry)

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("action") == "reset":
            with self.reporting("Reset"):
                self.reset()
        elif content.get("action") == "edit" and isinstance(content.get("values"), dict):
            edit_id = content.get("id")
            self.last_edit = edit_id if isinstance(edit_id, str) else None
            with self.reporting("Form"):
                self.edit(content["values"])
            # answered even when it failed (the error shows on the form): the view stops waiting
            with self.reporting("Form"):
                for applied in list(self._edit_listeners):
                    applied(self.last_edit)

    def on_edit_applied(self, callback: Callable[[str | None], None]) -> None:
        """Call ``callback(edit_id)`` once the kernel has applied an edit from the view, even
        one that changed nothing: the view shows a picked choice's price until then."""
        self._edit_listeners.append(callback)

    def edit(self, changes: Mapping[str, Any]) -> None:
        """The user's edits of some fields (the view sends only what changed, so a value the
        kernel set meanwhile, such as a reference just chosen, is never overwritten by the
        view's older copy). Fields this form no longer has are ignored."""
        known = {f["name"] for f in self.fields}
        kept = {name: value for name, value in changes.items() if name in known}
        if kept:
            self.values = {**self.values, **kept}

    # -- loading ---------------------------------------------------------------------------

    def load(self, entry: Mapping[str, Any], mode: str | None = None) -> None:
        """Show the form for ``entry`` (a catalog entry dict) in ``mode`` (its first by default)."""
        self._entry = dict(entry)
        modes = [
            {"id": m["id"], "name": m.get("name") or m["id"]} for m in entry.get("modes") or []
        ]
        chosen = spec.mode_of(entry, mode)["id"]
        with self._internal(), self.hold_trait_notifications():
            self.chosen_model = entry["id"]
            self.model_name = entry.get("name") or entry["id"]
            self.modes = modes
            self.mode = chosen
            self.values = spec.start_values(entry, chosen, self._given, self._chosen)
        self._recompute()

    def reset(self) -> None:
        """Back to the mode's defaults and example request (forgetting what the user gave)."""
        if self._entry is not None:
            self._given.clear()
            self._chosen.clear()
            with self._internal():
                self.values = spec.example_values(self._entry, self.mode)

    @contextlib.contextmanager
    def _internal(self) -> Iterator[None]:
        """Value changes made here are the form's own, not the user's."""
        outer, self._loading = self._loading, True
        try:
            yield
        finally:
            self._loading = outer

    @property
    def entry(self) -> dict[str, Any] | None:
        """The catalog entry of the model the form is built for (None before one is chosen)."""
        return self._entry

    # -- reading ---------------------------------------------------------------------------

    @property
    def request(self) -> dict[str, Any]:
        """The request body this form describes (send it with the client as it is)."""
        return self._request(self.values)

    def choices(self) -> Iterator[tuple[str, list[Any]]]:
        """Each field chosen from a short list (a select of its own choices, a toggle), with
        that list: what a user can pick in one click."""
        for field in self.fields:
            if field.get("control") == "toggle":
                yield field["name"], [True, False]
            elif field.get("control") == "select" and len(field.get("options") or ()) <= 24:
                yield field["name"], [option["value"] for option in field["options"]]

    def request_with(self, name: str, value: Any) -> dict[str, Any]:
        """The request this form would describe with ``name`` set to ``value``."""
        return self._request({**self.values, name: value})

    def _request(self, values: dict[str, Any]) -> dict[str, Any]:
        if self._entry is None:
            raise ValueError("no model chosen yet")
        return spec.build_request(self._entry, self.mode, values)

    @property
    def valid(self) -> bool:
        """A model is chosen and no field has an issue: the request can be sent."""
        return self._entry is not None and not self.issues

    def set_value(self, name: str, value: Any) -> None:
        """Set one field's value, as if typed."""
        self.values = {**self.values, name: value}

    # -- references (chaining and uploads) -------------------------------------------------

    def add_reference(self, asset_id: str, label: str, kind: str) -> None:
        """Offer ``asset_id`` (an output or upload) in the reference inputs of matching media."""
        refs = [r for r in self.references if r["asset_id"] != asset_id]
        self.references = [{"asset_id": asset_id, "label": label, "kind": kind}, *refs]

    def choose_reference(self, asset_id: str, label: str, kind: str) -> str | None:
        """ "Use as reference": offer ``asset_id`` and put it into this form's first input for
        ``kind`` (returned), or, when this mode has none, into the next model or mode that does."""
        self.add_reference(asset_id, label, kind)
        self._chosen[kind] = asset_id
        if not self.reference_fields(kind):
            return None
        return self.use_reference(asset_id, kind)

    def submitted(self, request: Mapping[str, Any]) -> None:
        """A request went out: a reference it used has been used, and stops filling the inputs
        of the models chosen after it (an optional, priced input must not fill itself)."""
        sent = {v for value in request.values() for v in _as_list(value) if isinstance(v, str)}
        self._chosen = {kind: asset for kind, asset in self._chosen.items() if asset not in sent}

    def label_of(self, name: str) -> str:
        """The label a field shows in the form (its name when it has none)."""
        return next((f["label"] for f in self.fields if f["name"] == name), name)

    def reference_fields(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The fields that take a media input (of ``kind``: image, video, audio), which an
        output can fill ("Use as reference")."""
        return [
            f
            for f in self.fields
            if f["control"] == "reference" and (kind is None or f.get("media") == kind)
        ]

    def use_reference(self, asset_id: str, kind: str, field: str | None = None) -> str:
        """Put ``asset_id`` into ``field`` (or the first reference input taking ``kind``).

        Returns the field used; raises ValueError naming the mode when none takes this media.
        """
        candidates = self.reference_fields(kind)
        if field is not None:
            candidates = [f for f in candidates if f["name"] == field]
        if not candidates:
            raise ValueError(
                f"{self.model_name} ({self.mode}) has no reference input for {kind}"
                + (f" named {field!r}" if field else "")
                + "; choose a model or mode that takes one"
            )
        target = candidates[0]
        name: str = target["name"]
        if target.get("multiple"):
            current = [a for a in self.values.get(name) or [] if a != asset_id]
            self.set_value(name, [*current, asset_id])
        else:
            self.set_value(name, asset_id)
        return name

    @command
    def upload(self, msg: Any, buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """A file the user picked in the browser, for reference input ``msg["field"]``."""
        field = str(msg.get("field", ""))
        name = str(msg.get("name") or "upload")
        content_type = str(msg.get("type") or "application/octet-stream")
        if self.uploader is None:
            self.error = "Uploading needs a client: create the form from studio() or pass uploader."
            return {"ok": False}, []
        if not buffers:
            return {"ok": False}, []
        data = bytes(buffers[0])
        self.uploading = field
        self.clear_error()
        _tasks.spawn(self._upload(field, name, content_type, data), reporter=self._upload_failed)
        return {"ok": True}, []

    async def _upload(self, field: str, name: str, content_type: str, data: bytes) -> None:
        assert self.uploader is not None
        asset_id = await self.uploader(name, content_type, data)
        self.uploading = ""
        kind = media_kind(content_type)
        self.add_reference(asset_id, f"{name} (uploaded)", kind)
        self.use_reference(asset_id, kind, field or None)

    def _upload_failed(self, exc: BaseException) -> None:
        self.uploading = ""
        self.report(exc, context="Upload failed")

    # -- keeping fields and issues current -------------------------------------------------

    @traitlets.observe("mode")
    def _on_mode(self, change: Any) -> None:
        if self._entry is not None and change["old"] and change["new"] != change["old"]:
            with self._internal():
                self.values = spec.start_values(
                    self._entry, change["new"], self._given, self._chosen
                )
            self._recompute()

    @traitlets.observe("values")
    def _on_values(self, change: Any) -> None:
        if not self._loading:
            self._remember(change["old"] or {}, change["new"] or {})
        self._recompute()

    def _remember(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Record the fields the user changed (an emptied field is no longer "given")."""
        media = {f["name"]: f["media"] for f in self.reference_fields() if f.get("media")}
        for name in set(old) | set(new):
            value = new.get(name)
            if value == old.get(name):
                continue
            if value in (None, "", [], {}):
                self._given.pop(name, None)
                if name in media:  # the user took the reference out: do not carry it on
                    self._chosen.pop(media[name], None)
            else:
                self._given[name] = value

    def _recompute(self) -> None:
        if self._entry is None:
            return
        with self.reporting("Form"):
            self.fields = spec.field_specs(self._entry, self.mode, self.values)
            self.issues = spec.check(self._entry, self.mode, self.values)

    def snapshot_text(self) -> str:
        if not self.chosen_model:
            return "Request: no model chosen"
        given = [f"{k}={v!r}" for k, v in self.values.items() if v not in (None, "", [], {})]
        text = f"Request · {self.model_name or self.chosen_model} ({self.mode or 'default'})"
        shown = ", ".join(given)
        return text + (f": {shown[:300]}{'…' if len(shown) > 300 else ''}" if given else "")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]

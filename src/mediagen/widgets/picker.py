"""``ModelPicker``: browse the catalog by kind and text search; modes, tiers, price per model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import traitlets

from mediagen.display._html import plural
from mediagen.widgets import _catalog_view as cv
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._snapshot import StaticFallback
from mediagen.wire._fields import ServiceModel, as_json


class ModelPicker(StaticFallback, MediagenWidget):
    """A searchable list of models. ``value`` is the chosen model id; ``entry`` its catalog entry.

    Filtering runs in the kernel (``kind`` and ``query`` are traits), so what the list shows is
    exactly what :attr:`options` says, testable without a browser.
    """

    _module = "picker.js"

    kind = traitlets.Unicode("").tag(sync=True)
    query = traitlets.Unicode("").tag(sync=True)
    options = traitlets.List(traitlets.Dict()).tag(sync=True)
    value = traitlets.Unicode("").tag(sync=True)
    loading = traitlets.Bool(False).tag(sync=True)

    def __init__(self, models: Iterable[Any] = (), **kwargs: Any) -> None:
        self._entries: dict[str, dict[str, Any]] = {}
        self._summaries: list[dict[str, Any]] = []
        super().__init__(**kwargs)
        if models:
            self.set_models(models)

    def set_models(self, models: Iterable[ServiceModel | Mapping[str, Any]]) -> None:
        """Show these catalog entries (client models or dicts)."""
        entries = [as_json(m) for m in models]
        self._entries = {e["id"]: e for e in entries}
        self._summaries = [cv.summary(e) for e in entries]
        self._refilter()

    @property
    def entry(self) -> dict[str, Any] | None:
        """The chosen model's full catalog entry."""
        return self._entries.get(self.value)

    def entry_for(self, model_id: str) -> dict[str, Any] | None:
        """The catalog entry of ``model_id``, or None when the catalog has no such model."""
        return self._entries.get(model_id)

    @traitlets.observe("kind", "query")
    def _on_filter(self, _change: Any) -> None:
        self._refilter()

    @traitlets.validate("kind")
    def _valid_kind(self, proposal: Any) -> str:
        value: str = proposal["value"]
        if value and value not in cv.KINDS:
            raise traitlets.TraitError(f"kind must be one of {', '.join(cv.KINDS)} or ''")
        return value

    def _refilter(self) -> None:
        self.options = cv.filter_summaries(self._summaries, self.kind, self.query)

    def snapshot_text(self) -> str:
        chosen = self.value or "none chosen"
        return f"Model: {chosen} (of {plural(len(self.options), 'model')})"

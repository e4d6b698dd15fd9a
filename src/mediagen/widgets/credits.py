"""``CreditMeter``: balance, the member cap (used / limit, reset time) and this session's spend."""

from __future__ import annotations

from typing import Any

import traitlets

from mediagen.widgets import _tasks
from mediagen.widgets._base import MediagenWidget
from mediagen.widgets._service import Service, field


class CreditMeter(MediagenWidget):
    """Refreshed on demand and after each completed generation (:meth:`generation_finished`)."""

    _module = "credits.js"

    credits = traitlets.Dict().tag(sync=True)
    session_spend = traitlets.Float(0.0).tag(sync=True)
    session_count = traitlets.Int(0).tag(sync=True)
    refreshing = traitlets.Bool(False).tag(sync=True)

    def __init__(self, service: Service, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service = service
        self._counted: set[str] = set()
        self.on_msg(lambda _w, content, _b: content == {"action": "refresh"} and self.refresh())

    def refresh(self) -> _tasks.Handle:
        """Fetch the balance again, in the background."""
        self.refreshing = True

        async def run() -> None:
            try:
                self.credits = await self.service.credits()
                self.clear_error()
            finally:
                self.refreshing = False

        return _tasks.spawn(run(), reporter=lambda exc: self.report(exc, context="Credits"))

    def generation_finished(self, generation: Any) -> _tasks.Handle:
        """Count a finished generation's charge into the session once, then refresh."""
        generation_id = field(generation, "id")
        charged = field(generation, "credits_charged")
        if generation_id not in self._counted and charged is not None:
            self._counted.add(generation_id)
            self.session_spend = round(self.session_spend + float(charged), 2)
            self.session_count += 1
        return self.refresh()

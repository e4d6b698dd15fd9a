"""Notebook widgets: pick a model, see the price, submit, watch and play the media inline.

Each widget is usable alone; :func:`studio` composes them. Imported lazily by attribute so
``import mediagen.widgets`` stays cheap until a widget is used.
"""

from __future__ import annotations

from mediagen._extras import require
from mediagen._lazy import lazy_exports

_EXPORTS = {
    "Compare": "mediagen.widgets._compare",
    "CreditMeter": "mediagen.widgets.credits",
    "Gallery": "mediagen.widgets.gallery",
    "JobCard": "mediagen.widgets.job",
    "LiveEstimate": "mediagen.widgets.estimate",
    "MediaPlayer": "mediagen.widgets.player",
    "ModelPicker": "mediagen.widgets.picker",
    "PlanView": "mediagen.widgets.plan",
    "compare": "mediagen.widgets._compare",
    "RequestForm": "mediagen.widgets.form",
    "SpendDashboard": "mediagen.widgets.spend_dashboard",
    "Studio": "mediagen.widgets._studio",
    "studio": "mediagen.widgets._studio",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(
    __name__, _EXPORTS, before=lambda name: require("notebook", f"mediagen.widgets.{name}")
)

"""Notebook widgets: pick a model, see the price, submit, watch and play the media inline.

Each widget is usable alone; :func:`studio` composes them. Imported lazily by attribute so
``import mediagen.widgets`` stays cheap until a widget is used.
"""

from __future__ import annotations

import importlib
from typing import Any

from mediagen._extras import require

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mediagen.widgets' has no attribute {name!r}")
    require("notebook", f"mediagen.widgets.{name}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

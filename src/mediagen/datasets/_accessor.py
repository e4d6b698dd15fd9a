"""``df.mediagen``: the pandas accessor, ``df.mediagen.plan(...)`` and ``.generate(...)``.

Registered with pandas' own ``register_dataframe_accessor`` (the documented way to add a
namespace to DataFrame), by ``import mediagen`` when pandas is loaded already, or the moment
pandas is imported later (the package root's import hook), so ``import mediagen`` itself
never loads pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from mediagen._extras import TABLES, require
from mediagen.datasets import _plan

if TYPE_CHECKING:
    from mediagen.client import Client

NAME = "mediagen"


class MediagenAccessor:
    """``df.mediagen.plan(model=..., prompt="{caption}")``, ``df.mediagen.generate(...)``."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def plan(self, client: Client | None = None, **options: Any) -> _plan.Plan:
        """``mediagen.datasets.plan(df, ...)``: check and price every row; nothing is sent."""
        require("notebook", "df.mediagen", TABLES)
        return _plan.plan(self._frame, client, **options)

    def generate(self, client: Client | None = None, **options: Any) -> pd.DataFrame:
        """``mediagen.datasets.generate(df, ...)``: plan and run in one call."""
        require("notebook", "df.mediagen", TABLES)
        return _plan.generate(self._frame, client, **options)


def register() -> None:
    """Add ``df.mediagen`` (once: pandas warns when a name is registered twice)."""
    if not isinstance(getattr(pd.DataFrame, NAME, None), type):
        pd.api.extensions.register_dataframe_accessor(NAME)(MediagenAccessor)

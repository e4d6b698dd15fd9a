"""What the grid's file and its static HTML read from a comparison, as a protocol.

``_compare_store`` (the Parquet file) and ``_compare_snapshot`` (the snapshot and the report)
take the grid this way, so they sit below ``_compare``, which calls them, instead of naming its
class.
"""

from __future__ import annotations

from typing import Any, Protocol

from mediagen.widgets._compare_plan import Plan
from mediagen.widgets._media import MediaItem


class ComparedGrid(Protocol):
    """A prompt x setting grid: its plan, its cells as they stand, its media and judgements."""

    plan: Plan
    #: (row, column) -> the cell's state (status, estimate, charge, media items...)
    _cells: dict[tuple[int, int], dict[str, Any]]
    #: media key -> the output it names, in the client's cache
    _media_items: dict[str, MediaItem]

    @property
    def prompts(self) -> list[str]: ...

    @property
    def columns(self) -> list[dict[str, Any]]: ...

    @property
    def cells(self) -> list[dict[str, Any]]: ...

    @property
    def chosen(self) -> dict[str, Any]: ...

    @property
    def ratings(self) -> dict[str, Any]: ...

    def snapshot_text(self) -> str: ...

    def register_media(self, item: MediaItem) -> MediaItem: ...

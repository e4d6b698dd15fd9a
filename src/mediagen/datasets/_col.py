"""``mediagen.col(name)``: a request field that takes the row's value as it is.

A string field with ``{column}`` placeholders is formatted per row, so the text of a row always
becomes text; a list of asset ids, a number or a flag is given by naming its column instead.
This module imports nothing, so ``mediagen.col`` costs nothing to reach.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class col:  # lower case: it reads as a function, mg.col("line")
    """The value of column ``name`` in each row, unchanged (not formatted as text)."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("mediagen.col() takes a column name")

    def __repr__(self) -> str:
        return f"mediagen.col({self.name!r})"

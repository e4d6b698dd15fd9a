"""The comparison grid as static HTML, for where no widget can run (nbconvert, GitHub, a restart).

A table of prompts x settings: each cell's status, price or charge, latency, the error code of a
failure, a small thumbnail of an image (video and audio are named, never embedded), and the
row's winner marked. Inline styles only: a saved notebook has no stylesheet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mediagen import _html

if TYPE_CHECKING:
    from mediagen.widgets._compare import Compare

THUMBNAIL_PX = 120
_CELL = "border:1px solid var(--jp-border-color2, #e0e0e0); padding:4px; vertical-align:top"


def grid_html(grid: Compare) -> str:
    head = "".join(f'<th style="{_CELL}">{_html.escape(c["label"])}</th>' for c in grid.columns)
    rows = []
    for r, prompt in enumerate(grid.prompts):
        cells = "".join(
            _cell_html(grid, r, c, grid.chosen.get(str(r)) == c) for c in range(len(grid.columns))
        )
        label = f'<th style="{_CELL}; text-align:left">{_html.escape(prompt)}</th>'
        rows.append(f"<tr>{label}{cells}</tr>")
    table = (
        f'<table style="border-collapse:collapse"><tr><th style="{_CELL}">Prompt</th>{head}</tr>'
        + "".join(rows)
        + "</table>"
    )
    return _html.box(_html.escape(grid.snapshot_text()), table, kind="compare")


def _cell_html(grid: Compare, row: int, col: int, chosen: bool) -> str:
    cell = grid.cells[row * len(grid.columns) + col]
    parts = []
    items = cell.get("items") or []
    item = grid._media_items.get(items[0]["key"]) if items else None
    if item is not None:
        parts.append(_html.thumbnail_html(item.as_output(), thumbnail_px=THUMBNAIL_PX))
    charged = cell.get("credits")
    price = (
        f"{_html.credits_text(charged)} cr"
        if charged is not None
        else f"est. {_html.credits_text(cell.get('estimate'))} cr"
    )
    line = f"{_html.escape(cell['status'])} · {price}"
    if cell.get("latency_s") is not None:
        line += f" · {_html.credits_text(cell['latency_s'])} s"
    parts.append(f'<div style="{_html.MUTED}">{line}</div>')
    if cell.get("error_code"):
        parts.append(f"<div>{_html.escape(cell['error_code'])}</div>")
    if chosen:
        parts.append("<div><b>★ chosen</b></div>")
    return f'<td style="{_CELL}; width:{THUMBNAIL_PX + 10}px">{"".join(parts)}</td>'

"""The comparison grid as static HTML: the widget's fallback, and a report to share.

A table of prompts x settings: each cell's status, price or charge, latency, the error code of a
failure, its media, and the row's winner marked. Inline styles only: a saved notebook (or a
mailed file) has no stylesheet. In a notebook's snapshot an image is a small thumbnail and video
and audio are only named (the notebook stays small); the exported report embeds every output,
images downsized and each video or audio file up to ``_html.MAX_EMBED_BYTES`` (a larger one is
named by its cell and size, never by where it is on this machine), so it opens anywhere without
the kernel or the cache.
"""

from __future__ import annotations

from mediagen.display import _html
from mediagen.widgets._compare_grid import ComparedGrid

THUMBNAIL_PX = 120
_CELL = "border:1px solid var(--jp-border-color2, #e0e0e0); padding:4px; vertical-align:top"


def report_html(grid: ComparedGrid, max_embed_bytes: int = _html.MAX_EMBED_BYTES) -> str:
    """A self-contained HTML document of the grid (see the module docstring)."""
    title = _html.escape(grid.snapshot_text())
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"</head><body>{grid_html(grid, embed=max_embed_bytes)}</body></html>"
    )


def grid_html(grid: ComparedGrid, *, embed: int | None = None) -> str:
    """The grid as a table; ``embed``: include each output's media up to that many bytes."""
    head = "".join(f'<th style="{_CELL}">{_html.escape(c["label"])}</th>' for c in grid.columns)
    rows = []
    for r, prompt in enumerate(grid.prompts):
        cells = "".join(
            _cell_html(grid, r, c, grid.chosen.get(str(r)) == c, embed)
            for c in range(len(grid.columns))
        )
        label = f'<th style="{_CELL}; text-align:left">{_html.escape(prompt)}</th>'
        rows.append(f"<tr>{label}{cells}</tr>")
    table = (
        f'<table style="border-collapse:collapse"><tr><th style="{_CELL}">Prompt</th>{head}</tr>'
        + "".join(rows)
        + "</table>"
    )
    return _html.box(_html.escape(grid.snapshot_text()), table, kind="compare")


def _cell_html(grid: ComparedGrid, row: int, col: int, chosen: bool, embed: int | None) -> str:
    cell = grid.cells[row * len(grid.columns) + col]
    parts: list[str] = []
    items = cell.get("items") or []
    item = grid._media_items.get(items[0]["key"]) if items else None
    if item is not None and embed is not None:
        parts.extend(
            _html.media_html(
                {**grid._media_items[i["key"]].as_output(), "filename": i.get("label")},
                max_embed_bytes=embed,
                name_path=False,
            )
            for i in items
        )
    elif item is not None:
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
    stars = grid.ratings.get(f"{row},{col}")
    if stars:
        parts.append(f'<div aria-label="rated {stars} of 5">{"★" * stars}{"☆" * (5 - stars)}</div>')
    return f'<td style="{_CELL}; width:{THUMBNAIL_PX + 10}px">{"".join(parts)}</td>'

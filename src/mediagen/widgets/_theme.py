"""Plots for a dark page.

Plots drawn in the kernel (PNG images) cannot read the page's CSS; without this they are white
boxes in a dark JupyterLab. A view that shows them reports the page's theme (``watchTheme`` in
the views' ``shared.ts``) into a ``dark`` trait, and the kernel redraws with these settings.
"""

from __future__ import annotations

#: matplotlib settings for plots on a dark page (JupyterLab Dark's colours)
DARK_PLOT_STYLE = {
    "figure.facecolor": "#111111",
    "axes.facecolor": "#111111",
    "savefig.facecolor": "#111111",
    "text.color": "#e0e0e0",
    "axes.labelcolor": "#e0e0e0",
    "axes.edgecolor": "#9e9e9e",
    "xtick.color": "#bdbdbd",
    "ytick.color": "#bdbdbd",
    "legend.labelcolor": "#e0e0e0",
}

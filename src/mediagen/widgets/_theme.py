"""``ThemeProbe``: an invisible widget that tells the kernel whether the page is dark.

Plots drawn in the kernel (PNG images) cannot read the page's CSS; without this they are white
boxes in a dark JupyterLab. Put a probe next to them and redraw on ``dark`` changes.
"""

from __future__ import annotations

import traitlets

from mediagen.widgets._base import MediagenWidget


class ThemeProbe(MediagenWidget):
    _module = "theme.js"

    #: True while the page around the widget uses a dark theme
    dark = traitlets.Bool(False).tag(sync=True)


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

"""mediagen: a JupyterLab toolkit for a paid media generation service."""

__version__ = "0.1.0"

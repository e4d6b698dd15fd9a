"""What the benchmarks that drive a real browser share: their command line, the Chromium
they need, and how they print a spread of runs."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the browser tests' fixtures (a JupyterLab or marimo server, Chromium's path and flags) and
# the helpers of every test (a free port)
sys.path[:0] = [str(HERE.parent / "tests" / "ui"), str(HERE.parent / "tests")]


def arguments(doc: str | None) -> argparse.Namespace:
    """``--repeats N`` (5): how many times each figure is measured."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    return parser.parse_args()


def require_chromium() -> None:
    """Exit with what to install when Debian's Chromium is missing."""
    from conftest import CHROMIUM

    if not CHROMIUM.exists():
        sys.exit(f"needs Chromium at {CHROMIUM}: apt-get install chromium")


def spread(values: list[float]) -> str:
    """The median and, in brackets, the lowest and highest run."""
    return f"{statistics.median(values):8.1f} [{min(values):.0f}..{max(values):.0f}]"

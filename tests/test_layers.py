"""The layers of CONTRIBUTING.md hold: import-linter's contracts in pyproject.toml, run here so
the test command enforces them (a module importing a layer above it fails this test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = (
    "from importlinter.cli import lint_imports; "
    "raise SystemExit(lint_imports(no_cache=True, no_logo=True))"
)


def test_every_import_points_down_the_layers():
    done = subprocess.run(
        [sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout

"""The JupyterLab extension's TypeScript: its unit tests (jest) and its linters (eslint,
prettier) run from source, as CI builds it (about 35 s on a fresh checkout, 20 s after)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "labextension"


@pytest.mark.slow
def test_typescript_unit_tests_and_linters_pass():
    jlpm, npm = shutil.which("jlpm"), shutil.which("npm")
    assert jlpm, "jlpm comes with jupyterlab (the test extra)"
    assert npm, "npm builds the JupyterLab extension (scripts/setup-test-deps)"
    env = dict(os.environ)
    # jlpm (yarn 3) has a registry setting of its own: npm's, as .ci/run gives it
    env.setdefault(
        "YARN_NPM_REGISTRY_SERVER",
        subprocess.run(
            [npm, "config", "get", "registry"], capture_output=True, text=True, check=True
        ).stdout.strip(),
    )
    for step in (["install"], ["test"], ["lint"]):
        done = subprocess.run(
            [jlpm, *step], cwd=SOURCE, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"jlpm {step[0]}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"

"""The JupyterLab extension's TypeScript and the widgets' (labextension/widgets): their unit
tests (jest) and linters (tsc, eslint, prettier) run from source, as CI builds it (about 35 s
on a fresh checkout, 20 s after); the widgets' modules the package holds are the ones today's
sources bundle into."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "labextension"
STATIC = SOURCE.parent / "src" / "mediagen" / "widgets" / "static"


@pytest.mark.slow
def test_typescript_unit_tests_and_linters_pass(tmp_path):
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
    # the widgets are bundled aside, then compared with the package's: an edit of their
    # TypeScript not yet built (jlpm build:widgets) fails here, not in a user's notebook
    aside = tmp_path / "widgets"
    for step in (["install"], ["test"], ["lint"], ["build:widgets", "--outdir", str(aside)]):
        done = subprocess.run(
            [jlpm, *step], cwd=SOURCE, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"jlpm {step[0]}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    built = sorted(p.name for p in aside.glob("*.js"))
    assert built == sorted(p.name for p in STATIC.glob("*.js"))
    for name in built:
        fresh = (aside / name).read_text(encoding="utf-8")
        assert fresh == (STATIC / name).read_text(encoding="utf-8"), (
            f"{name} is older than its sources: run jlpm build:widgets in labextension/"
        )

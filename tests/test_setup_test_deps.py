"""`scripts/setup-test-deps` asks apt-get only for what is missing, run on a PATH of stubs.

Each test builds a PATH holding a recording `apt-get` (and `sudo`), stub `npm` / `chromium`
commands where the case says they exist, and the few real tools the script runs (`env`, `id`,
or an `id` stub that says "not root"); the script runs on that PATH alone, so what it asks
for is exactly what it would ask a real machine for.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "setup-test-deps"
BASH = shutil.which("bash") or "/bin/bash"


def _stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!{BASH}\n{body}\n")
    path.chmod(0o755)


def _recording(bin_dir: Path, name: str, log: Path) -> None:
    """A stub that appends its arguments (and DEBIAN_FRONTEND) to ``log`` and succeeds."""
    _stub(bin_dir, name, f'echo "{name} DEBIAN_FRONTEND=${{DEBIAN_FRONTEND:-}} $*" >> "{log}"')


def _machine(
    tmp_path: Path, *, has: tuple[str, ...], apt: bool = True, root: bool = True
) -> tuple[dict[str, str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    log.touch()
    for tool in ("env", "id"):
        real = shutil.which(tool)
        assert real is not None
        (bin_dir / tool).symlink_to(real)
    for command in has:
        _stub(bin_dir, command, "exit 0")
    if apt:
        _recording(bin_dir, "apt-get", log)
    if not root:
        (bin_dir / "id").unlink()
        _stub(bin_dir, "id", 'if [ "$1" = "-u" ]; then echo 1000; else exit 1; fi')
        # sudo records itself, then runs the command it was given (on this PATH)
        _stub(bin_dir, "sudo", f'echo "sudo $*" >> "{log}"; exec "$@"')
    return {"PATH": str(bin_dir), "HOME": str(tmp_path)}, log


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30, check=False
    )


def _apt_calls(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line.startswith("apt-get")]


def test_npm_already_there_is_not_asked_for(tmp_path: Path) -> None:
    env, log = _machine(tmp_path, has=("npm", "java"))
    result = _run(env)
    assert result.returncode == 0, result.stderr
    update, install = _apt_calls(log)
    assert update.startswith("apt-get DEBIAN_FRONTEND=noninteractive update")
    assert "install -y" in install
    assert "DPkg::Lock::Timeout=" in install
    assert install.split()[-1] == "chromium"
    assert "npm" not in install


def test_all_present_installs_nothing(tmp_path: Path) -> None:
    env, log = _machine(tmp_path, has=("npm", "chromium", "java"))
    result = _run(env)
    assert result.returncode == 0, result.stderr
    assert log.read_text() == ""
    assert "nothing to do" in result.stdout


def test_all_missing_are_installed_with_one_update(tmp_path: Path) -> None:
    env, log = _machine(tmp_path, has=())
    result = _run(env)
    assert result.returncode == 0, result.stderr
    calls = _apt_calls(log)
    assert [c.split()[2] for c in calls] == ["update", "install"]
    assert calls[1].split()[-3:] == ["chromium", "npm", "default-jre-headless"]


def test_a_missing_java_is_installed_for_spark(tmp_path: Path) -> None:
    env, log = _machine(tmp_path, has=("npm", "chromium"))
    result = _run(env)
    assert result.returncode == 0, result.stderr
    assert _apt_calls(log)[-1].split()[-1] == "default-jre-headless"


def test_not_root_goes_through_sudo(tmp_path: Path) -> None:
    env, log = _machine(tmp_path, has=("chromium", "java"), root=False)
    result = _run(env)
    assert result.returncode == 0, result.stderr
    lines = log.read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["sudo", "apt-get", "sudo", "apt-get"]
    assert lines[-1].split()[-1] == "npm"


@pytest.mark.parametrize("has", [(), ("chromium",)])
def test_without_apt_get_says_what_to_install(tmp_path: Path, has: tuple[str, ...]) -> None:
    env, _ = _machine(tmp_path, has=has, apt=False)
    result = _run(env)
    assert result.returncode == 1
    assert "no apt-get" in result.stderr
    assert "npm" in result.stderr
    assert ("chromium" in result.stderr) == ("chromium" not in has)


def test_ci_calls_the_script() -> None:
    ci = (SCRIPT.parents[1] / ".ci" / "run").read_text()
    assert "scripts/setup-test-deps" in ci
    assert "apt-get" not in ci
    assert os.access(SCRIPT, os.X_OK)

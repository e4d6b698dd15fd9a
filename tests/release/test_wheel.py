"""The release a user installs: an sdist and a wheel built from this tree, checked by twine,
the wheel installed into a fresh virtual environment and run from outside the source tree.

The venv starts with the bare install (the client): there each feature whose extra is missing
must say so in one line, and the widgets' front-end files must load from the installed
package. Then the sandbox extra is added and a real generation runs against ``mediagen
sandbox`` started from the venv's own command. The working directory is a temporary folder
and ``PYTHONPATH`` is cleared, so a file missing from the wheel fails here, not on a user's
machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mediagen._version import __version__

pytestmark = [pytest.mark.release, pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
#: The widgets' views: each is bundled from labextension/widgets/src/views/<view>.ts into the
#: package's widgets/static/<view>.js by the build (git-ignored, so named from the sources).
VIEWS = sorted(p.stem for p in (ROOT / "labextension" / "widgets" / "src" / "views").glob("*.ts"))

#: Paths every wheel must hold, beyond every file under src/ (checked below). Add a path here
#: when the build puts something in the wheel that is not a file of src/ (a prebuilt
#: JupyterLab extension under ``mediagen-VERSION.data/data/share/jupyter/...``, say).
REQUIRED_IN_WHEEL: list[str] = [
    "mediagen/py.typed",
    "mediagen/widgets/static/mediagen.css",
    *(f"mediagen/widgets/static/{view}.js" for view in VIEWS),
    f"mediagen-{__version__}.dist-info/licenses/LICENSE",
    f"mediagen-{__version__}.dist-info/entry_points.txt",
    # the prebuilt JupyterLab extension and the file that enables its server side
    f"mediagen-{__version__}.data/data/share/jupyter/labextensions/@mediagen/jupyterlab/package.json",
    f"mediagen-{__version__}.data/data/etc/jupyter/jupyter_server_config.d/mediagen.json",
]


def _run(*command: str | Path, cwd: Path, check: bool = True, **options):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        **options,
    )
    if check:
        assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """``python -m build``: the sdist, then the wheel built from that sdist."""
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--outdir", out, ROOT, cwd=ROOT)
    return out


@pytest.fixture(scope="module")
def wheel(dist) -> Path:
    (found,) = dist.glob(f"mediagen-{__version__}-py3-none-any.whl")
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> tuple[Path, Path]:
    """A fresh venv with the wheel and its bare dependencies: (its bin folder, a cwd)."""
    return _fresh_venv(tmp_path_factory.mktemp("venv"), str(wheel))


def _fresh_venv(here: Path, wheel: str) -> tuple[Path, Path]:
    _run(sys.executable, "-m", "venv", "--without-pip", here / "env", cwd=here)
    bin_dir = here / "env" / "bin"
    _pip_install(bin_dir, wheel, cwd=here)
    elsewhere = here / "cwd"
    elsewhere.mkdir()
    return bin_dir, elsewhere


def _pip_install(bin_dir: Path, *what: str | Path, cwd: Path) -> None:
    """This interpreter's pip installing into the venv (``--python``): no pip copied into it."""
    _run(
        sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "-q", *what, cwd=cwd
    )


def test_twine_accepts_the_sdist_and_the_wheel(dist):
    done = _run(sys.executable, "-m", "twine", "check", "--strict", *dist.iterdir(), cwd=dist)
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_the_wheel_holds_every_file_of_the_package(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    missing = sorted((sources | set(REQUIRED_IN_WHEEL)) - names)
    assert not missing, f"not in {wheel.name}: {missing}"


def test_the_metadata_is_complete(wheel):
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"mediagen-{__version__}.dist-info/METADATA").decode()
    for field in (
        "Requires-Python: >=3.10",
        "License-Expression: MIT",
        "License-File: LICENSE",
        "Keywords: ",
        "Classifier: Typing :: Typed",
        "Project-URL: Documentation",
        "Project-URL: Changelog",
        "Provides-Extra: sandbox",
        "Provides-Extra: docs",
    ):
        assert field in metadata


def test_the_changelog_top_release_is_the_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d[^\]]*)\] - \d{4}-\d{2}-\d{2}$", changelog, re.MULTILINE)
    assert releases, "no release heading like '## [0.1.0] - 2026-11-26'"
    assert releases[0] == __version__
    assert "## [Unreleased]" in changelog


def test_the_installed_wheel_imports_and_names_its_version(venv):
    bin_dir, cwd = venv
    where = _run(bin_dir / "python", "-c", "import mediagen; print(mediagen.__file__)", cwd=cwd)
    assert Path(where.stdout.strip()).is_relative_to(bin_dir.parent)
    assert _run(bin_dir / "mediagen", "--version", cwd=cwd).stdout == f"mediagen {__version__}\n"


def test_the_jupyterlab_extension_is_installed_prebuilt(venv):
    """No Node.js on the user's side: the bundle and the server extension's switch land where
    JupyterLab and Jupyter Server look for them, and the bundle names its entry point."""
    bin_dir, _ = venv
    prefix = bin_dir.parent
    bundle = prefix / "share" / "jupyter" / "labextensions" / "@mediagen" / "jupyterlab"
    meta = json.loads((bundle / "package.json").read_text(encoding="utf-8"))
    entry = meta["jupyterlab"]["_build"]["load"]
    assert (bundle / entry).is_file(), entry
    switch = prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "mediagen.json"
    enabled = json.loads(switch.read_text(encoding="utf-8"))
    assert enabled["ServerApp"]["jpserver_extensions"] == {"mediagen.jupyter_server": True}


def test_the_widgets_front_end_files_load_from_the_installed_package(venv):
    bin_dir, cwd = venv
    script = (
        "import json\n"
        "from mediagen.widgets import _assets\n"
        "names = sorted(p.name for p in _assets.STATIC.iterdir())\n"
        "esm = {n: _assets.bundled(n) for n in names if n.endswith('.js')}\n"
        "css = _assets.css(*[n for n in names if n.endswith('.css') and n != 'mediagen.css'])\n"
        "print(json.dumps({'names': names, 'esm': esm, 'css': css}))\n"
    )
    loaded = json.loads(_run(bin_dir / "python", "-c", script, cwd=cwd).stdout)
    static = SRC / "mediagen" / "widgets" / "static"
    shipped = sorted(p.name for p in static.iterdir())
    assert loaded["names"] == shipped
    assert sorted(loaded["esm"]) == [f"{view}.js" for view in VIEWS]
    for name, module in loaded["esm"].items():
        # the module this tree's build made, self-contained: no import left to resolve
        assert module == (static / name).read_text(encoding="utf-8"), name
        assert not re.search(r"^\s*import\s", module, re.MULTILINE), f"{name}: an import is left"
        assert re.search(r"export\s*\{[^}]*\bas default\b|export default", module), name
    assert ".mg-" in loaded["css"]


#: What each feature says in the bare install: (Python to run or a command, the extra)
PYTHON_FEATURES = {
    "mediagen.studio()": ("mg.studio()", "notebook"),
    "mediagen.compare()": ("mg.compare(['a fox'], models=['pixel-1'])", "notebook"),
    "%load_ext mediagen": ("mg.load_ipython_extension(None)", "notebook"),
    "client.generations.to_dataframe()": (
        "mg.Client(api_key='k', base_url='http://127.0.0.1:9').generations.to_dataframe()",
        "notebook",
    ),
    "mediagen.dask": ("mg.dask", "dask"),
    "mediagen.spark": ("mg.spark", "spark"),
}


@pytest.mark.parametrize("feature", sorted(PYTHON_FEATURES))
def test_a_feature_without_its_extra_names_it_in_one_line(venv, feature):
    bin_dir, cwd = venv
    call, extra = PYTHON_FEATURES[feature]
    script = (
        "import mediagen as mg\n"
        f"try:\n    {call}\n"
        "except mg.MissingExtraError as e:\n"
        "    assert isinstance(e, ImportError)\n"
        "    assert isinstance(e.__cause__, ModuleNotFoundError)\n"
        "    print(e)\n"
    )
    said = _run(bin_dir / "python", "-c", script, cwd=cwd).stdout
    assert said.startswith(f"{feature} needs the {extra} extra (no module named ")
    assert said.endswith(f'pip install "mediagen[{extra}]"\n')
    assert said.count("\n") == 1


@pytest.mark.parametrize(("command", "extra"), [("sandbox", "sandbox"), ("lab", "lab")])
def test_a_command_without_its_extra_prints_one_line_and_exits_1(venv, command, extra):
    bin_dir, cwd = venv
    done = _run(bin_dir / "mediagen", command, cwd=cwd, check=False)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"mediagen {command} needs the {extra} extra (no module named ")
    assert done.stderr.endswith(f'pip install "mediagen[{extra}]"\n')
    assert done.stderr.count("\n") == 1


def test_the_sandbox_module_without_its_extra_prints_one_line_and_exits_1(venv):
    bin_dir, cwd = venv
    done = _run(bin_dir / "python", "-m", "mediagen_sandbox", cwd=cwd, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("python -m mediagen_sandbox needs the sandbox extra (no module")
    assert done.stderr.endswith('pip install "mediagen[sandbox]"\n')
    assert done.stderr.count("\n") == 1


def test_df_mediagen_with_pandas_alone_names_the_notebook_extra(venv):
    """pandas installed by hand but not the notebook extra: ``df.mediagen`` is there (it is
    registered when pandas is imported) and says which extra it needs. Runs after the checks
    above, which hold with pandas installed too."""
    bin_dir, cwd = venv
    _pip_install(bin_dir, "pandas", cwd=cwd)
    script = (
        "import mediagen as mg\n"
        "import pandas as pd\n"
        "try:\n"
        "    pd.DataFrame({'caption': ['a teapot']}).mediagen.plan(model='pixel-1')\n"
        "except mg.MissingExtraError as e:\n"
        "    print(e)\n"
    )
    said = _run(bin_dir / "python", "-c", script, cwd=cwd).stdout
    assert said == (
        "df.mediagen needs the notebook extra (no module named 'pyarrow'): "
        'pip install "mediagen[notebook]"\n'
    )


def test_with_the_sandbox_extra_a_real_generation_runs(tmp_path, wheel):
    """A venv of its own (the bare one above stays bare), with the sandbox extra."""
    bin_dir, cwd = _fresh_venv(tmp_path, f"{wheel}[sandbox]")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    server = subprocess.Popen(
        [bin_dir / "mediagen", "sandbox", "--port", "0", "--speed", "0", "--data-dir", "data"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        found: dict[str, str] = {}
        assert server.stdout is not None
        for line in server.stdout:
            match = re.match(r"^(?:export\s+)?(MEDIAGEN_[A-Z_]+)=(\S+)\s*$", line.strip())
            if match:
                found[match.group(1)] = match.group(2)
            if {"MEDIAGEN_BASE_URL", "MEDIAGEN_API_KEY"} <= found.keys():
                break
        script = (
            "import mediagen as mg\n"
            "with mg.Client() as client:\n"
            "    gen = client.images.create(model='pixel-1', prompt='a lighthouse at dusk')\n"
            "    gen = client.generations.wait(gen)\n"
            "    path = gen.outputs[0].local_path\n"
            "    print(gen.status, gen.credits_charged > 0, open(path, 'rb').read(4))\n"
        )
        run_env = {
            **env,
            "MEDIAGEN_BASE_URL": found["MEDIAGEN_BASE_URL"],
            "MEDIAGEN_API_KEY": found["MEDIAGEN_API_KEY"],
            "MEDIAGEN_CACHE_DIR": str(cwd / "cache"),
        }
        done = subprocess.run(
            [bin_dir / "python", "-c", script],
            cwd=cwd,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "completed True b'\\x89PNG'"
    finally:
        server.terminate()
        server.wait(timeout=30)

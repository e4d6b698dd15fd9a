"""A feature whose extra is not installed says so in one line naming the ``pip install``.

Here a package is made unimportable the way Python documents it (``sys.modules[name] = None``:
its import raises ``ModuleNotFoundError``); tests/release/test_wheel.py checks the same from the
built wheel in a virtual environment where the extras were never installed.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pandas as pd
import pytest

import mediagen as mg
import mediagen.widgets
from mediagen.cli import main


def _hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def _one_line(error: BaseException, feature: str, extra: str, module: str) -> None:
    text = str(error)
    assert "\n" not in text
    assert text.startswith(f"{feature} needs the {extra} extra")
    assert f"no module named {module!r}" in text
    assert text.endswith(f'pip install "mediagen[{extra}]"')
    assert isinstance(error.__cause__, ModuleNotFoundError)


@pytest.mark.parametrize(
    ("call", "feature"),
    [
        (lambda: mg.studio(), "mediagen.studio()"),
        (lambda: mg.compare(["a fox"], models=["pixel-1"]), "mediagen.compare()"),
        (lambda: mg.compare.load("grid.parquet"), "mediagen.compare.load()"),
        (lambda: mg.spend_dashboard(), "mediagen.spend_dashboard()"),
        (lambda: mg.load_ipython_extension(None), "%load_ext mediagen"),
        (lambda: mediagen.widgets.Studio, "mediagen.widgets.Studio"),
    ],
)
def test_the_widgets_without_the_notebook_extra_name_it(monkeypatch, call, feature):
    _hide(monkeypatch, "ipywidgets")
    monkeypatch.delitem(vars(mediagen.widgets), "Studio", raising=False)  # bound on first use
    with pytest.raises(mg.MissingExtraError) as raised:
        call()
    assert isinstance(raised.value, ImportError)
    assert raised.value.extra == "notebook"
    assert raised.value.name == "ipywidgets"
    _one_line(raised.value, feature, "notebook", "ipywidgets")


@pytest.mark.parametrize(("cluster", "module"), [("dask", "distributed"), ("spark", "pyspark")])
def test_a_cluster_without_its_extra_names_it(monkeypatch, cluster, module):
    _hide(monkeypatch, module)
    monkeypatch.delitem(sys.modules, f"mediagen.datasets.{cluster}", raising=False)
    monkeypatch.delitem(sys.modules, f"mediagen.{cluster}", raising=False)
    monkeypatch.delitem(vars(mg), cluster, raising=False)  # bound by an earlier import
    with pytest.raises(mg.MissingExtraError) as raised:
        getattr(mg, cluster)
    _one_line(raised.value, f"mediagen.{cluster}", cluster, module)
    with pytest.raises(mg.MissingExtraError) as raised:
        importlib.import_module(f"mediagen.{cluster}")
    _one_line(raised.value, f"mediagen.{cluster}", cluster, module)


def test_the_clusters_are_modules_under_their_short_names():
    """``import mediagen.dask`` and ``from mediagen.spark import generate`` work as written in
    the docs, and give the objects ``mediagen.dask`` gives as an attribute."""
    code = (
        "import mediagen.dask\n"
        "from mediagen.spark import generate\n"
        "import mediagen, mediagen.datasets.dask, mediagen.datasets.spark\n"
        "assert mediagen.dask is mediagen.datasets.dask\n"
        "assert generate is mediagen.spark.generate is mediagen.datasets.spark.generate\n"
        "assert mediagen.dask.generate.__module__ == 'mediagen.datasets.dask'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_tables_without_pyarrow_name_the_notebook_extra(monkeypatch, sandbox, tenant):
    client = mg.Client(api_key=tenant.api_key, base_url=sandbox.base_url)
    client.generations.to_dataframe(store=False)  # with pyarrow: a table
    frame = pd.DataFrame({"caption": ["a teapot"]})
    _hide(monkeypatch, "pyarrow")
    monkeypatch.setattr("mediagen.client._hooks._history_builder", None)
    with pytest.raises(mg.MissingExtraError) as raised:
        client.generations.to_dataframe()
    _one_line(raised.value, "client.generations.to_dataframe()", "notebook", "pyarrow")
    with pytest.raises(mg.MissingExtraError) as raised:
        frame.mediagen.plan(client, model="pixel-1", prompt="{caption}")
    _one_line(raised.value, "df.mediagen", "notebook", "pyarrow")


@pytest.mark.parametrize(
    ("argv", "extra", "module"),
    [(["sandbox", "--port", "0"], "sandbox", "uvicorn"), (["lab"], "lab", "jupyterlab")],
)
def test_the_command_without_its_extra_prints_one_line_and_exits_1(
    monkeypatch, capsys, argv, extra, module
):
    _hide(monkeypatch, module)
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"mediagen {argv[0]} needs the {extra} extra (no module named {module!r}): "
        f'pip install "mediagen[{extra}]"\n'
    )


def test_the_command_prints_its_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"mediagen {mg.__version__}\n"


def test_with_every_extra_installed_nothing_is_refused():
    from mediagen._extras import EXTRAS, require

    for extra in EXTRAS:
        require(extra, "this test")


def test_looking_for_pandas_before_importing_it_keeps_the_accessor_coming():
    """A check for an installed extra looks pandas up (``find_spec``) before anything imports
    it; ``df.mediagen`` must still appear when pandas is imported afterwards."""
    import subprocess

    script = (
        "import sys, importlib.util\n"
        "import mediagen\n"
        "from mediagen._extras import TABLES, require\n"
        "assert 'pandas' not in sys.modules\n"
        "require('notebook', 'a check', TABLES)\n"
        "assert importlib.util.find_spec('pandas') is not None\n"
        "import pandas as pd\n"
        "print(hasattr(pd.DataFrame({'a': [1]}), 'mediagen'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"

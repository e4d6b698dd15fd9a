"""``mediagen.studio`` and ``mediagen.widgets.studio`` stay callable whatever was imported first.

Each order runs in a fresh interpreter: the bug this guards against (a submodule named like the
function replacing it in the package namespace) depends on what was imported before.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

FIRST = {
    "nothing": "",
    "the Studio class": "from mediagen.widgets import Studio",
    "the studio function": "from mediagen.widgets import studio",
    "every widget name": "from mediagen.widgets import *",
    "the widgets package": "import mediagen.widgets",
    "the extension": "import mediagen.extension",
}
CHECK = """
import mediagen, mediagen.widgets
from mediagen.widgets import Studio
assert callable(mediagen.widgets.studio), type(mediagen.widgets.studio)
assert isinstance(Studio, type), type(Studio)
import inspect
assert inspect.isfunction(mediagen.widgets.studio), mediagen.widgets.studio
for name in mediagen.widgets.__all__:
    assert not inspect.ismodule(getattr(mediagen.widgets, name)), name
print("ok")
"""


@pytest.mark.parametrize("first", FIRST.values(), ids=FIRST.keys())
def test_studio_stays_a_function_after_any_first_import(first):
    result = subprocess.run(
        [sys.executable, "-c", f"{first}\n{CHECK}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_mediagen_studio_makes_a_studio_after_importing_the_class(sandbox, tenant, tmp_path):
    """The call users type, in the order that used to break: it builds a real studio."""
    code = (
        "from mediagen.widgets import Studio\n"
        "import mediagen\n"
        f"client = mediagen.Client(api_key={tenant.api_key!r}, base_url={sandbox.base_url!r},"
        f" cache_dir={str(tmp_path)!r})\n"
        "studio = mediagen.studio(client, reattach=False)\n"
        "studio.ready.result(60)\n"
        "print(type(studio).__name__, len(studio.picker.options) > 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["Studio", "True"]

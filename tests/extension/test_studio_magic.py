"""``%mediagen studio`` makes a studio whatever the notebook imported from the widgets first."""

from __future__ import annotations

from mediagen.widgets import Studio


def test_studio_magic_after_importing_the_studio_class(shell):
    first = shell.run("from mediagen.widgets import Studio, studio")
    assert first.success, first.error
    made = shell.run("%mediagen studio")
    assert made.success, made.error
    assert isinstance(made.result, Studio)
    made.result.ready.result(60)  # the catalog loads: the studio works, not just exists
    assert made.result.picker.options
    called = shell.run("studio(reattach=False)")  # the imported name is the function too
    assert called.success, called.error
    assert isinstance(called.result, Studio)

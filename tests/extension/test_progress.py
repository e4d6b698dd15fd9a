"""The progress display: plain text outside a notebook, a widget replaced by a summary inside."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from mediagen.display._progress import (
    Progress,
    ProgressSummary,
    format_seconds,
    generation_callback,
    generation_message,
    in_notebook,
)


def test_text_mode_reports_counts_messages_and_a_final_line():
    stream = io.StringIO()
    with Progress("Fetching history", unit="page", mode="text", stream=stream) as bar:
        bar.advance(message="100 generations")
        bar.advance(message="150 generations")
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("Fetching history: ")
    assert lines[-1].startswith("Fetching history: 2/") is False
    assert "2 pages · 150 generations · done in" in lines[-1]


def test_text_mode_with_a_total_and_an_interrupt():
    stream = io.StringIO()

    def submit_one_then_interrupt():
        with Progress("Submitting", total=4, unit="job", mode="text", stream=stream) as bar:
            bar.advance()
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        submit_one_then_interrupt()
    assert "Submitting: 1/4 jobs · interrupted after" in stream.getvalue().splitlines()[-1]


def test_widget_mode_shows_a_bar_then_leaves_a_static_summary():
    InteractiveShell.instance()  # widgets display through a running shell
    with capture_output() as captured:
        bar = Progress("Downloading", total=3, unit="file", mode="widget")
        bar.advance(message="a.png")
        bar.advance(message="b.png")
        assert (bar._widget.value, bar._widget.max) == (2, 3)
        assert "2/3 files · b.png" in bar._widget.line
        assert bar._widget.description == "Downloading"
        bar.close()
    first, last = captured.outputs[0], captured.outputs[-1]
    assert "application/vnd.jupyter.widget-view+json" in first.data
    # an anywidget: no ipywidgets control for a front end to know
    assert first.data["application/vnd.jupyter.widget-view+json"]["model_id"]
    assert bar._widget._view_module == "anywidget"
    # The live widget is replaced in place (same display id) by a summary with no widget state.
    assert last.update is True
    assert last.transient["display_id"] == first.transient["display_id"]
    assert "application/vnd.jupyter.widget-view+json" not in last.data
    assert "Downloading" not in last.data["text/plain"]
    assert "2/3 files · b.png · done in" in last.data["text/plain"]
    assert "mediagen-progress-summary" in last.data["text/html"]
    bar.close("twice is harmless")
    assert bar.closed


def test_marimo_mode_follows_a_total_learned_late_and_a_new_total():
    """marimo draws a spinner while the amount of work is unknown; once a total comes, the
    spinner becomes a bar of that total, and a bar follows a changed total. (Outside a running
    marimo notebook its output calls draw nothing, so the indicators can be read here.)"""
    pytest.importorskip("marimo", reason="marimo is in the test extra")
    bar = Progress("Fetching history", unit="page", mode="marimo")
    assert type(bar._indicator).__name__ == "Spinner"
    bar.update(1, total=4)
    assert type(bar._indicator).__name__ == "ProgressBar"
    assert (bar._indicator.total, bar._indicator.current) == (4, 1)
    bar.update(3, total=6)
    assert (bar._indicator.total, bar._indicator.current) == (6, 3)
    bar.close()
    assert bar._indicator.closed


def test_marimo_mode_leaves_an_indicator_marimo_closed_alone():
    """A cell that re-ran closes the indicators of its last run; the work that still reports
    to one must go on, not die of marimo's RuntimeError."""
    pytest.importorskip("marimo", reason="marimo is in the test extra")
    for total in (3, None):
        bar = Progress("Waiting", total=total, mode="marimo")
        bar._indicator.close()
        bar.update(2)
        bar.update(2, total=5)
        bar.close()
        assert bar.closed


def test_not_a_notebook_in_a_plain_shell_or_script():
    assert in_notebook() is False  # InteractiveShell is not a kernel
    script = (
        "import mediagen.display._progress as p, sys; "
        "print(p.in_notebook(), p.in_marimo(), 'anywidget' in sys.modules, 'marimo' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "False", "False", "False"]


def test_generation_messages_and_callback():
    stream = io.StringIO()
    bar = Progress("Generation", mode="text", stream=stream)
    callback = generation_callback(bar)
    callback({"status": "pending", "model": "vidra-2"}, 1.5)
    assert bar.message == "pending · vidra-2"
    done = {"status": "completed", "model": "vidra-2", "credits_charged": 36.0}
    assert generation_message(done) == "completed · vidra-2 · 36.0 credits charged"
    failed = {"status": "failed", "model": "m", "error": {"code": "safety", "message": "x"}}
    assert generation_message(failed) == "failed · m · error safety"


def test_summary_and_seconds_formatting():
    assert repr(ProgressSummary("done")) == "done"
    assert "&#9888;" in ProgressSummary("<b>", ok=False)._repr_html_()
    assert "&lt;b&gt;" in ProgressSummary("<b>")._repr_html_()
    assert format_seconds(4.25) == "4.2 s"
    assert format_seconds(185) == "3 min 05 s"
    assert format_seconds(3720) == "1 h 02 min"

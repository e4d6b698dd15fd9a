"""A table's plan as a widget, against the real sandbox: the view's figures are the plan's, the
static fallback carries the same ones, and a plan shows the widget only where one can render."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

import mediagen as mg
from mediagen.datasets import plan
from mediagen.display._html import credits_text
from mediagen.display._progress import format_seconds
from mediagen.widgets.plan import PlanView

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def products(rows: int = 7) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "caption": [f"product {n}" for n in range(rows)],
            "model": ["pixel-1", "pixel-pro"] * (rows // 2) + ["pixel-1"] * (rows % 2),
        },
        index=[f"sku-{n}" for n in range(rows)],
    )


def test_the_view_shows_the_plans_total_counts_and_first_rows(make_client, tenant):
    made = plan(
        products(), make_client(tenant), model=mg.col("model"), prompt="{caption}",
        run_id="catalog-v1",
    )  # fmt: skip
    view = PlanView(made)

    assert made.total > 0
    assert view.total == made.total
    assert view.rows == 7
    assert view.skipped == 0
    assert view.run_id == "catalog-v1"
    counts = made.counts().reset_index()
    assert [(c["model"], c["rows"], c["credits"]) for c in view.counts] == list(
        zip(counts["model"], counts["rows"], counts["credits"], strict=True)
    )
    assert {c["model"] for c in view.counts} == {"pixel-1", "pixel-pro"}
    assert [r["label"] for r in view.sample] == ["sku-0", "sku-1", "sku-2", "sku-3", "sku-4"]
    assert [r["estimate"] for r in view.sample] == list(made.requests["estimate"].head(5))
    assert view.sample[1]["summary"] == "pixel-pro · “product 1”"
    assert view.forecast["enough"] is False, "a new tenant has no history to forecast from"
    assert "no time forecast yet" in view.forecast["summary"]

    # the static fallback: the plan's own HTML, with the same total and rows
    assert view.snapshot_html() == made._repr_html_()
    assert f"{credits_text(made.total)} credits" in view.snapshot_html()
    assert "sku-4" in view.snapshot_html()
    assert "sku-5" not in view.snapshot_html()
    assert view.snapshot_text() == repr(made)


def test_rows_left_out_show_in_the_view_and_the_fallback(make_client, tenant):
    table = products(4).drop(columns="model")
    table["quality"] = ["low", "ultra-mega", "low", "low"]
    made = plan(
        table, make_client(tenant), model="pixel-pro", prompt="{caption}",
        quality=mg.col("quality"), on_invalid="skip",
    )  # fmt: skip
    view = PlanView(made)

    assert view.rows == 3
    assert view.skipped == 1
    assert view.total == made.total == pytest.approx(3 * made.requests["estimate"].iloc[0])
    assert [r["label"] for r in view.invalid] == ["sku-1"]
    assert view.invalid[0]["problem"].startswith("quality:")
    assert [r["valid"] for r in view.sample] == [True, False, True, True]
    html = view.snapshot_html()
    assert "1 invalid row skipped" in html
    assert "<code>sku-1</code>: quality:" in html


SCRIPT = """\
import json, sys
import pandas as pd
import mediagen as mg
table = pd.DataFrame({"caption": ["a teapot", "a lamp"]})
made = table.mediagen.plan(model="pixel-1", prompt="{caption}")
bundle = made._repr_mimebundle_()
print(json.dumps({"bundle": bundle, "html": made._repr_html_(), "repr": repr(made),
                  "widgets": "ipywidgets" in sys.modules}))
"""


def test_without_a_notebook_a_plan_shows_its_static_html(sandbox, tenant, tmp_path):
    env = {
        **os.environ,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_API_KEY": tenant.api_key,
        "MEDIAGEN_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["bundle"] == {"text/plain": seen["repr"], "text/html": seen["html"]}
    assert seen["widgets"] is False, "showing a plan outside a kernel loads no widgets"


def test_in_a_kernel_a_plan_is_a_widget_and_its_snapshot_is_the_static_html(
    sandbox, tenant, tmp_path
):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import pandas as pd\nimport mediagen as mg\n"
            "table = pd.DataFrame({'caption': ['a teapot', 'a lamp', 'a chair']})\n"
            "made = table.mediagen.plan(model='pixel-pro', prompt='{caption}', quality='low')\n"
            "made"
        ),
        nbformat.v4.new_code_cell("print(repr(made)); print(made.total)"),
    ]
    env = {
        **os.environ,
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_API_KEY": tenant.api_key,
        "MEDIAGEN_CACHE_DIR": str(tmp_path / "cache"),
    }
    NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(tmp_path)}}).execute(
        env=env
    )
    widget_output, snapshot_output = notebook.cells[0].outputs
    assert set(widget_output["data"]) == {WIDGET_VIEW, "text/plain"}
    assert widget_output["data"]["text/plain"] == ""  # the snapshot below says it all
    printed_repr, printed_total = notebook.cells[1].outputs[0]["text"].splitlines()
    assert snapshot_output["data"]["text/plain"] == printed_repr
    total = credits_text(float(printed_total))
    assert f"{total} credits" in snapshot_output["data"]["text/html"]
    assert tenant.api_key not in json.dumps(notebook)

    # rendered without a kernel (nbconvert's HTML), the snapshot shows the plan
    page, _ = HTMLExporter().from_notebook_node(notebook)
    assert f"{total} credits</b> for 3 rows" in page
    assert "a chair" in page


def test_with_enough_history_the_view_shows_the_time_and_failures_forecast(make_client, tenant):
    client = make_client(tenant)
    made = [client.images.create(model="pixel-1", prompt="a lighthouse") for _ in range(5)]
    made.append(client.images.create(model="pixel-1", prompt="refused [[fail:safety]]"))
    list(client.generations.watch(made, timeout=60, download=False))
    client.generations.to_dataframe()  # the local history store, synced
    table = products(4).drop(columns="model")
    planned = plan(table, client, model="pixel-1", prompt="{caption}")
    expected = planned.forecast()
    view = PlanView(planned)

    assert expected.p50_seconds is not None
    assert view.forecast["enough"] is True
    assert view.forecast["p50"] == format_seconds(expected.p50_seconds)
    assert view.forecast["p90"] == format_seconds(expected.p90_seconds)
    assert view.forecast["failures"] == pytest.approx(4 / 6)
    assert "all done in about" in view.forecast["summary"]
    assert view.forecast["summary"] in html.unescape(view.snapshot_html())


def test_the_view_follows_a_run_of_its_plan_row_by_row(make_client, tenant, sandbox):
    """A run of a shown plan moves its view: rows done, spent, time left, and the key's pace
    once its rate limit holds the run; the last line says how the run ended."""
    client = make_client(tenant)
    made = plan(products(6), client, model="pixel-1", prompt="{caption}", run_id="followed")
    view = PlanView(made)
    lines: list[str] = []
    view.observe(lambda change: lines.append(change["new"]), names="progress")
    assert view.progress == ""
    with sandbox.admin.key_rate_limited(tenant.key_id, 2, burst=1):
        out = made.run(concurrency=4, progress=False)
    assert (out["status"] == "completed").all()
    assert lines[0].startswith("1/6 rows: 0 failed"), lines
    assert any("left" in line for line in lines[:-1]), lines
    assert any("req/s held" in line for line in lines), lines
    assert view.progress.startswith(f"Run done: 6 rows, 0 failed, {made.total:g} credits in ")

"""The credit meter in real JupyterLab: a rolling spend limit is shown with what is left, and
its Refresh button works without a Python or browser error."""

from __future__ import annotations

from playwright.sync_api import expect


def test_the_meter_shows_the_spend_limits_and_refreshes(lab, tmp_path):
    limit_file = tmp_path / "limit.jsonl"
    notebook = lab.open(
        "meter.ipynb",
        [
            "import mediagen as mg\n"
            "from mediagen.widgets import CreditMeter\n"
            f"limit = mg.SpendLimit(daily=10, weekly=30, path={str(limit_file)!r})\n"
            f"client = mg.Client(budget=limit, cache_dir={str(tmp_path / 'cache')!r})\n"
            "meter = CreditMeter(client)\n"
            "meter",
            "client.generations.wait(client.images.create(model='pixel-1', prompt='dusk'),"
            " timeout=60).status",
        ],
    )
    seen_before = len(lab.console)
    notebook.run_cell(0)
    meter = notebook.output(0)
    expect(meter.locator(".mg-meter-limit").first).to_have_text("Daily limit 0 / 10")
    expect(meter.locator(".mg-meter-limit").nth(1)).to_have_text("Weekly limit 0 / 30")
    expect(meter.get_by_role("meter", name="Daily limit used")).to_have_attribute(
        "aria-valuenow", "0"
    )
    notebook.run_cell(1)
    notebook.wait_cell_done(1)
    meter.get_by_role("button", name="Refresh credits").click()
    expect(meter.locator(".mg-meter-limit").first).to_have_text("Daily limit 1 / 10")
    expect(meter.locator(".mg-error")).to_have_text("")
    errors = [m for m in lab.console[seen_before:] if m.startswith("error")]
    assert not errors, errors

"""The studio's estimate carries a forecast from the user's own history, in real JupyterLab:
a plain "no history yet" first, then how long the request usually takes once the local history
store knows enough of the model's generations."""

from __future__ import annotations

from playwright.sync_api import expect
from test_studio import JOB_TIMEOUT, pick


def test_the_studio_estimate_shows_the_forecast_from_the_users_history(lab, tmp_path):
    cache = str(tmp_path / "cache")
    notebook = lab.open(
        "studio-forecast.ipynb",
        [
            "import mediagen\n"
            f"client = mediagen.Client(cache_dir={cache!r})\n"
            "studio = mediagen.studio(client, poll_interval=0.1, poll_cap=0.5, debounce=0.1)\n"
            "studio",
            "for i in range(5):\n"
            "    client.images.create(model='pixel-1', prompt=f'kite {i} [[slow:0.2]]')"
            ".wait(timeout=60)\n"
            "len(client.generations.to_dataframe())",
        ],
    )
    seen_before = len(lab.console)
    notebook.run_cell(0)
    studio = notebook.output(0)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    forecast = studio.locator(".mg-studio-forecast")

    pick(studio, "Image", "pixel-1")
    expect(studio.locator(".mg-estimate .mg-estimate-price")).to_contain_text("credits")
    expect(forecast).to_contain_text("Forecast: no local history yet")

    notebook.run_cell(1)  # five generations, then the local history store is synced
    notebook.wait_cell_done(1, timeout=JOB_TIMEOUT)
    pick(studio, "Image", "pixel-pro")
    pick(studio, "Image", "pixel-1")
    expect(forecast).to_contain_text("Forecast: 1 job: all done in about", timeout=JOB_TIMEOUT)
    expect(forecast).to_contain_text("past generations of yours")
    errors = [m for m in lab.console[seen_before:] if m.startswith("error")]
    assert not errors, errors

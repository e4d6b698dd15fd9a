"""The studio's smaller parts (meter, picker, form, estimate) leave a one-line picture too, so a
saved notebook shows the balance, the model, the request and its price rather than an object."""

from __future__ import annotations

import html

from test_results_and_snapshots import OBJECT_DUMP, WIDGET_VIEW, bundle
from widget_loop import run, until

from mediagen.widgets import Studio


def test_each_part_of_a_priced_studio_says_what_it_shows(make_client, tenant):
    studio = Studio(make_client(tenant), history=False)

    async def scenario():
        await studio.ready  # the catalog is in the picker
        await studio.meter.refresh()
        studio.picker.value = "pixel-1"
        await until(lambda: studio.form.chosen_model == "pixel-1")
        studio.form.values = {**studio.form.values, "prompt": "a lighthouse at dusk"}
        await until(lambda: studio.estimate.status == "ready")

    run(scenario())
    texts = {}
    for name in ("meter", "picker", "form", "estimate"):
        data = bundle(getattr(studio, name))
        assert WIDGET_VIEW in data
        assert not OBJECT_DUMP.search(data["text/plain"])
        assert data["text/plain"] in html.unescape(data["text/html"])
        texts[name] = data["text/plain"]
    assert texts["meter"].startswith("Credits: 1,000 available")
    assert texts["picker"].startswith("Model: pixel-1 (of ")
    assert "prompt='a lighthouse at dusk'" in texts["form"]
    assert texts["estimate"] == "Estimate: 1 credits for pixel-1"

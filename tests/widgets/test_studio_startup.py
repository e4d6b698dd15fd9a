"""The studio's first paint: the catalog is asked for while the studio is still being built
(the kernel's loop runs nothing else until the cell returns), and fills the picker first."""

from __future__ import annotations

import threading

import httpx
from widget_loop import run

from mediagen.widgets import Studio
from mediagen.widgets._service import Service


def test_the_catalog_is_on_its_way_before_the_cell_that_builds_the_studio_returns(
    make_client, tenant
):
    asked = threading.Event()
    paths: list[str] = []

    def record(request: httpx.Request) -> None:
        paths.append(request.url.path)
        if request.url.path == "/v1/models":
            asked.set()

    http = httpx.Client(timeout=30, event_hooks={"request": [record]})
    service = Service(make_client(tenant, http_client=http))

    async def cell() -> Studio:
        studio = Studio(service=service, history=False)
        # still inside the cell: the loop is blocked here, as a kernel's is by a running cell
        assert asked.wait(timeout=20), "the catalog was not asked for during the cell"
        await studio.ready
        return studio

    try:
        studio = run(cell())
    finally:
        http.close()
    assert paths.count("/v1/models") == 1, paths  # asked once, not again when the loop ran
    ids = {option["id"] for option in studio.picker.options}
    assert {"pixel-1", "vidra-2"} <= ids
    assert not studio.picker.loading
    assert not studio.picker.error


#: widget models a studio makes before its first paint: the page creates each one (anywidget
#: imports each anywidget's module) before the studio is on screen
FIRST_PAINT_MODELS = 20


def test_the_studio_is_built_from_few_widget_models(make_client, tenant):
    from ipywidgets.widgets.widget import _instances

    service = Service(make_client(tenant))
    before = set(_instances)

    async def cell() -> Studio:
        studio = Studio(service=service, history=False)
        await studio.ready
        return studio

    studio = run(cell())
    made = sorted(type(_instances[k]).__name__ for k in set(_instances) - before)
    assert len(made) <= FIRST_PAINT_MODELS, f"{len(made)} models: {made}"
    # the layout is CSS (mediagen.css: .mg-studio), not nested boxes
    assert [type(child).__name__ for child in studio.children].count("VBox") == 1  # the jobs
    assert not any(name in {"HBox", "GridBox"} for name in made), made

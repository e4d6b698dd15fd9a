"""The studio's first paint: the catalog is asked for while the studio is still being built
(the kernel's loop runs nothing else until the cell returns), and fills the picker first."""

from __future__ import annotations

import threading

import httpx
from widget_loop import run, until

import mediagen
from mediagen.widgets import Studio


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
    client = make_client(tenant, http_client=http)

    async def cell() -> Studio:
        studio = Studio(client, history=False)
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
FIRST_PAINT_MODELS = 16


def test_the_first_paint_is_built_from_few_widget_models_and_the_rest_follows(make_client, tenant):
    from ipywidgets.widgets.widget import _instances

    client = make_client(tenant)
    before = set(_instances)

    def made_since(known: set) -> list[str]:
        return sorted(type(_instances[k]).__name__ for k in set(_instances) - known)

    async def cell() -> tuple[Studio, list[str], list[str]]:
        studio = Studio(client, history=False)
        first_paint = made_since(before)  # the cell's output: what the page must build first
        shown = set(_instances)
        await studio.ready
        await until(lambda: studio.meter.credits, what="the meter's first refresh")
        return studio, first_paint, made_since(shown)

    studio, first_paint, later = run(cell())
    assert len(first_paint) <= FIRST_PAINT_MODELS, f"{len(first_paint)} models: {first_paint}"
    assert not {"CreditMeter", "Gallery"} & set(first_paint), first_paint
    assert {"CreditMeter", "Gallery"} <= set(later), later
    # then in their places (the view lays them out by name): every part an anywidget, no box
    assert set(studio.parts) == {"meter", "picker", "form", "estimate", "gallery"}
    assert studio.parts["meter"] == f"anywidget:{studio.meter.model_id}"
    assert studio.parts["gallery"] == f"anywidget:{studio.gallery.model_id}"
    assert not any(name in {"HBox", "VBox", "GridBox", "Box"} for name in first_paint + later)


def _timed_cell(client: mediagen.Client, wait: float) -> tuple[Studio, list[dict], float]:
    """Build a studio that waits up to ``wait`` s for its catalog, as a cell would; return it,
    the picker's options when the cell returned, and how long building it took."""
    import time

    class Waiting(Studio):
        CATALOG_WAIT = wait

    async def cell() -> tuple[Studio, list[dict], float]:
        started = time.monotonic()
        studio = Waiting(client=client, history=False)
        took = time.monotonic() - started
        shown = list(studio.picker.options)  # what the first paint of the picker carries
        await studio.ready
        return studio, shown, took

    return run(cell())


def test_a_catalog_that_comes_while_the_studio_is_built_is_in_its_first_paint(make_client, tenant):
    studio, shown, _ = _timed_cell(make_client(tenant), wait=20)
    assert {"pixel-1", "vidra-2"} <= {option["id"] for option in shown}
    assert shown == studio.picker.options
    assert not studio.picker.loading


def test_a_slow_catalog_does_not_hold_the_cell_and_fills_the_picker_when_it_comes(
    make_client, tenant
):
    import time

    def slow_catalog(request: httpx.Request) -> None:
        if request.url.path == "/v1/models":
            time.sleep(1.5)

    http = httpx.Client(timeout=30, event_hooks={"request": [slow_catalog]})
    try:
        studio, shown, took = _timed_cell(make_client(tenant, http_client=http), wait=0.1)
    finally:
        http.close()
    assert shown == [], "the catalog was not in yet: the picker shows it loading"
    assert took < 1.0, f"building the studio took {took:.2f} s: it waited for a slow catalog"
    assert {"pixel-1", "vidra-2"} <= {option["id"] for option in studio.picker.options}

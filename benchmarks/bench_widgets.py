"""Widget benchmark, measured in the browser: the studio beside plain ipywidgets doing the same.

One sandbox (speed 0), one JupyterLab 4 server and Debian's Chromium (the harness of
``tests/ui``). In one notebook, each measurement is timed in the page with ``performance.now()``
from the action (running a cell, changing a select) until the result is on screen, and repeated;
the medians are printed with their ratio to a plain-ipywidgets baseline measured in the same run:

- cell run -> studio interactive (the picker lists the catalog, Submit is on screen), against a
  cell that fetches the catalog with httpx and shows ToggleButtons, Text, Select, Dropdowns, an
  HTML estimate and a Button;
- estimate refresh after a change (duration 5 <-> 10 s of vidra-2, until the new billed
  duration shows), against a Dropdown whose observer calls ``estimate_request`` synchronously
  and writes an HTML widget. The studio is measured at its default debounce (0.3 s) and at 0;
- price on screen after a change (the same duration select, until the new price shows: the
  choice's provisional price, priced ahead by the kernel from the catalog's price tables and
  shown by the page without waiting for the kernel), against a plain ipywidgets
  Dropdown whose observer writes the price into a Label (40 changes; goal: at most 1.0x);
- gallery render for 200 image outputs (200 cards in the DOM and the first image decoded),
  against what a careful ipywidgets user writes for 200 images: one ``ipywidgets.HTML`` holding
  a CSS grid of captioned ``<img loading="lazy">`` whose sources are data URLs (one widget, one
  message, the browser decodes what is on screen). For reference it is also timed against the
  obvious version, a GridBox of 200 captioned ``ipywidgets.Image`` (200 images, 600 widget
  models in widget state);
- a comparison grid of 10 prompts x 5 models (run once, then displayed again: 50 completed
  cells and the first image decoded), against a GridBox of the same 50 results as
  ``ipywidgets.Image`` / ``ipywidgets.Audio`` with their charge and latency; and how many media
  hold their bytes at that point (the grid loads a cell's media when it scrolls into view).

    python benchmarks/bench_widgets.py               # about a minute on 2 cores
    python benchmarks/bench_widgets.py --repeats 9

Nothing here asserts a time; the ratios are for reading (lower is better for mediagen).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from _browser import arguments, require_chromium, spread

SETUP = r"""
import base64, html, io, json, os, datetime as dt
import httpx, ipywidgets as w
from PIL import Image, ImageDraw
import mediagen
from mediagen.widgets import Gallery

CACHE = {cache!r}
client = mediagen.Client(cache_dir=CACHE)
BASE, KEY = os.environ["MEDIAGEN_BASE_URL"], os.environ["MEDIAGEN_API_KEY"]

def png(i):
    path = os.path.join(CACHE, f"bench-{{i}}.png")
    if not os.path.exists(path):
        image = Image.new("RGB", (256, 256), ((i * 37) % 256, (i * 91) % 256, 160))
        ImageDraw.Draw(image).ellipse((40, 40, 200, 200), fill=(240, 240, 240))
        os.makedirs(CACHE, exist_ok=True)
        image.save(path)
    return path

PATHS = [png(i) for i in range(200)]
NOW = dt.datetime.now(dt.timezone.utc)

def generation(i):
    return {{"id": f"gen-{{i}}", "type": "image", "status": "completed", "model": "pixel-1",
             "prompt": f"benchmark image {{i}}", "credits_charged": 1,
             "created_at": (NOW - dt.timedelta(seconds=i)).isoformat(),
             "outputs": [{{"content_type": "image/png", "width": 256, "height": 256}}]}}

def make_studio(debounce=0.3):
    return mediagen.studio(client, debounce=debounce)

def make_baseline():
    http = httpx.Client(base_url=BASE, headers={{"Authorization": f"Bearer {{KEY}}"}})
    models = http.get("/v1/models").json()["data"]
    kinds = w.ToggleButtons(options=["all", "image", "video", "audio"])
    search = w.Text(placeholder="Search models")
    select = w.Select(options=[(m["name"], m["id"]) for m in models], rows=10)
    duration = w.Dropdown(options=[5, 10], value=5, description="Duration")
    tier = w.Dropdown(options=["720p", "1080p"], value="720p", description="Tier")
    prompt = w.Textarea(value="A red fox", description="Prompt")
    price = w.HTML("")
    def estimate(_=None):
        body = {{"model": "vidra-2", "mode": "text_to_video", "prompt": prompt.value,
                 "tier": tier.value, "duration_seconds": duration.value}}
        e = client.models.estimate_request(body)
        price.value = (f"<div class='bl-price'>{{e.credits_after_discount}} credits, "
                       f"billed {{e.billable_duration_seconds:g}} s</div>")
    duration.observe(estimate, "value")
    estimate()
    submit = w.Button(description="Submit")
    box = w.VBox([kinds, search, select, prompt, tier, duration, price, submit])
    box.add_class("bl-ui")
    duration.add_class("bl-duration")
    return box

def make_label_baseline():
    duration = w.Dropdown(options=[5, 10], value=5, description="Duration")
    label = w.Label("30 credits")
    duration.observe(lambda change: setattr(label, "value", f"{{change.new * 6}} credits"), "value")
    duration.add_class("bl-label-duration")
    label.add_class("bl-label")
    return w.VBox([duration, label])

def make_gallery(n=200):
    gallery = Gallery()
    for i in range(n):
        gallery.add(generation(i), [PATHS[i]])
    return gallery

GRID_MODELS = ["pixel-1", "pixel-pro", "lumen-4k", "voxa-tts", "tunesmith"]

def make_baseline_grid(grid):
    cards = []
    for (r, c), cell in sorted(grid._cells.items()):
        item = grid._media_items[cell["items"][0]["key"]]
        with open(item.path, "rb") as f:
            data = f.read()
        if item.kind == "image":
            media = w.Image(value=data, format=item.content_type.split("/")[1], width=170)
        else:
            media = w.Audio(value=data, format=item.content_type.split("/")[1], autoplay=False)
        cards.append(w.VBox([media, w.HTML(f"{{cell['credits']}} cr · {{cell['latency_s']}} s")]))
    box = w.GridBox(cards, layout=w.Layout(grid_template_columns="repeat(5, 180px)"))
    box.add_class("bl-grid")
    return box

def make_baseline_gallery(n=200):
    # one HTML widget: a grid of captioned images as data URLs, decoded when on screen
    cards = []
    for i in range(n):
        with open(PATHS[i], "rb") as f:
            source = "data:image/png;base64," + base64.b64encode(f.read()).decode()
        caption = html.escape(f"benchmark image {{i}}")
        cards.append(f'<figure style="margin:0"><img src="{{source}}" width="170" height="170"'
                     f' loading="lazy" decoding="async" alt="{{caption}}">'
                     f"<figcaption><b>pixel-1</b> {{caption}}</figcaption></figure>")
    grid = ('<div style="display:grid;gap:8px;grid-template-columns:repeat(auto-fill,180px)">'
            + "".join(cards) + "</div>")
    view = w.HTML(grid)
    view.add_class("bl-gallery")
    return view

def make_widget_gallery(n=200):
    # one Image widget per output (its bytes in widget state), captioned, in a GridBox
    cards = []
    for i in range(n):
        with open(PATHS[i], "rb") as f:
            image = w.Image(value=f.read(), format="png", width=170)
        cards.append(w.VBox([image, w.HTML(f"<b>pixel-1</b> benchmark image {{i}}")]))
    grid = w.GridBox(cards, layout=w.Layout(grid_template_columns="repeat(auto-fill, 180px)"))
    grid.add_class("bl-widgets")
    return grid
"""

CELLS = [
    "make_studio()",
    "make_baseline()",
    "make_gallery(200)",
    "make_baseline_gallery(200)",
    "make_studio(debounce=0)",
    "GRID = mediagen.compare([f'benchmark prompt {i}' for i in range(10)], GRID_MODELS, client,"
    " run=True, concurrency=8)\n_ = await GRID.wait()",
    "GRID",
    "make_baseline_grid(GRID)",
    "make_label_baseline()",
    "make_widget_gallery(200)",
]
LABEL_CELL = 9
WIDGET_GALLERY_CELL = 10
#: vidra-2, text to video, 720p with audio: 6 credits a second
PRICE = {5: 30, 10: 60}

# JS predicates over a cell's node (only nodes that appeared after the run started count)
STUDIO_READY = """const pick = cell.querySelector('.mg-picker:not([data-old])');
    return pick && pick.querySelectorAll('[role=option]').length >= 13
        && cell.querySelector('.mg-estimate:not([data-old]) button');"""
BASELINE_READY = """const ui = cell.querySelector('.bl-ui:not([data-old])');
    return ui && ui.querySelectorAll('select option').length >= 13 && ui.querySelector('button');"""
GALLERY_READY = """const g = cell.querySelector('.mg-gallery:not([data-old])');
    if (!g || g.querySelectorAll('.mg-gallery-card').length !== 200) return false;
    const img = g.querySelector('img');
    return img && img.complete && img.naturalWidth > 0;"""
BASELINE_GALLERY_READY = """const g = cell.querySelector('.bl-gallery:not([data-old])');
    if (!g) return false;
    const imgs = g.querySelectorAll('img');
    return imgs.length === 200 && imgs[0].complete && imgs[0].naturalWidth > 0;"""
WIDGET_GALLERY_READY = BASELINE_GALLERY_READY.replace(".bl-gallery", ".bl-widgets")

GRID_READY = """const g = cell.querySelector('.mg-compare:not([data-old])');
    const done = g && g.querySelectorAll('.mg-compare-cell[data-status=completed]').length;
    if (done !== 50) return false;
    const img = g.querySelector('img');
    return img && img.complete && img.naturalWidth > 0;"""
BASELINE_GRID_READY = """const g = cell.querySelector('.bl-grid:not([data-old])');
    if (!g || g.querySelectorAll('img, audio').length !== 50) return false;
    const img = g.querySelector('img');
    return img && img.complete && img.naturalWidth > 0;"""
#: media elements holding their bytes once the view is ready (the rest load when scrolled to)
LOADED_MEDIA = """([path, index]) => findPanel(path).content.widgets[index].node
    .querySelectorAll('.mg-compare:not([data-old]) :is(img, audio, video)[src],'
        + ' .bl-grid:not([data-old]) :is(img, audio, video)[src]').length"""

UNTIL = """window.until = async (ready, what, seconds = 60) => {
    const end = performance.now() + seconds * 1000;
    while (!ready()) {
        if (performance.now() > end) throw new Error(`not on screen in ${seconds} s: ${what}`);
        await new Promise((r) => setTimeout(r, 2));
    }
};"""

TIME_CELL = """async ([path, index, predicate]) => {
    const panel = findPanel(path);
    const cell = panel.content.widgets[index].node;
    cell.querySelectorAll('.mg-picker, .mg-estimate, .mg-gallery, .bl-ui, .bl-gallery,'
        + ' .bl-widgets, .mg-compare, .bl-grid')
        .forEach((n) => { n.dataset.old = '1'; });
    const ready = new Function('cell', predicate);
    const start = performance.now();
    panel.content.activeCellIndex = index;
    window.jupyterapp.commands.execute('notebook:run-cell');
    await until(() => ready(cell), predicate);
    return performance.now() - start;
}"""

TIME_CHANGE = """async ([path, index, select, value, done]) => {
    const cell = findPanel(path).content.widgets[index].node;
    const node = cell.querySelector(select);
    const ready = new Function('cell', done);
    const start = performance.now();
    const option = [...node.options].find((o) => o.textContent.trim() === value);
    node.value = option.value;
    node.dispatchEvent(new Event('change', {bubbles: true}));
    await until(() => ready(cell), done);
    return performance.now() - start;
}"""

WAIT_FOR = """async ([path, index, done]) => {
    const cell = findPanel(path).content.widgets[index].node;
    const ready = new Function('cell', done);
    await until(() => ready(cell), done);
}"""


def studio_billed(seconds: int) -> str:
    return f"""const f = cell.querySelector('.mg-estimate .mg-estimate-figures');
        return f && !f.classList.contains('mg-stale')
            && f.textContent.includes('Billed duration{seconds} s');"""


def baseline_billed(seconds: int) -> str:
    return f"""const p = cell.querySelector('.bl-price');
        return p && p.textContent.includes('billed {seconds} s');"""


def studio_priced(seconds: int) -> str:
    """The new price on screen: the provisional one, or already the service's."""
    return f"""return [...cell.querySelectorAll('.mg-estimate .mg-estimate-price')]
        .some((n) => / {PRICE[seconds]} credits/.test(' ' + n.textContent.replace('≈', '')));"""


def label_priced(seconds: int) -> str:
    return f"""const l = cell.querySelector('.bl-label');
        return l && l.textContent.trim() === '{PRICE[seconds]} credits';"""


#: what each row is measured against (printed with the figures)
BASELINES = {
    "cell run -> studio interactive": "a cell fetching the catalog with httpx into ToggleButtons,"
    " Text, Select, Dropdowns, an HTML estimate and a Button",
    "estimate refresh (studio debounce 0.3 s)": "a Dropdown whose observer calls"
    " estimate_request and writes an HTML widget",
    "estimate refresh (studio debounce 0)": "the same Dropdown and HTML widget",
    "price on screen after a change (goal 1.0)": "a Dropdown whose observer writes a Label",
    "gallery render, 200 outputs": "one HTML widget: a grid of 200 captioned lazy <img> data URLs",
    "gallery render, 200 outputs (obvious way)": "a GridBox of 200 captioned Image widgets"
    " (the bytes in widget state)",
    "comparison grid 10x5, until interactive": "a GridBox of the 50 results as Image/Audio"
    " widgets with charge and latency",
}


def main() -> None:
    args = arguments(__doc__)
    require_chromium()

    from playwright.sync_api import sync_playwright

    from conftest import CHROMIUM, CHROMIUM_ARGS, FIND_PANEL, Lab, LabServer
    from mediagen_sandbox.testing import running_sandbox

    results: dict[str, tuple[list[float], list[float]]] = {}
    loaded = [0, 0]
    with (
        running_sandbox(speed=0.0) as sandbox,
        tempfile.TemporaryDirectory() as tmp,
    ):
        tenant = sandbox.new_tenant(balance=100_000, plan="enterprise")
        base = Path(tmp)
        (base / "lab").mkdir()
        env = {"MEDIAGEN_BASE_URL": sandbox.base_url, "MEDIAGEN_API_KEY": tenant.api_key}
        server = LabServer(base / "lab", env)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.set_default_timeout(120_000)
                page.add_init_script(FIND_PANEL)
                page.add_init_script(UNTIL)
                page.on("pageerror", lambda e: print("browser error:", e, file=sys.stderr))
                page.on(
                    "console",
                    lambda m: m.type == "error" and print("console:", m.text, file=sys.stderr),
                )
                lab = Lab(server, page)
                setup = SETUP.format(cache=str(base / "cache"))
                notebook = lab.open("bench.ipynb", [setup, *CELLS])
                notebook.run_cell(0)
                notebook.wait_cell_done(0, timeout=120_000)

                def time_cell(index: int, predicate: str) -> float:
                    return page.evaluate(TIME_CELL, [notebook.name, index, predicate])

                def time_change(index: int, select: str, value: str, done: str) -> float:
                    return page.evaluate(TIME_CHANGE, [notebook.name, index, select, value, done])

                # warm-up: first imports and first views are not what is compared
                time_cell(1, STUDIO_READY)
                time_cell(2, BASELINE_READY)
                # a cell run is quick and its spread wide (each side's runs span 100 ms about a
                # median near 170 ms): six times the repeats, so that the ratio of medians moves
                # by a few percent between runs (15 runs a side moved it by 13%: 0.94 to 1.07)
                ready = ([], [])
                for _ in range(args.repeats * 6):
                    ready[0].append(time_cell(1, STUDIO_READY))
                    ready[1].append(time_cell(2, BASELINE_READY))
                results["cell run -> studio interactive"] = ready

                # estimates: choose vidra-2 in the studio first
                time_cell(5, STUDIO_READY)
                for index in (1, 5):
                    cell = notebook.cell(index)
                    cell.locator('.mg-picker [role=option][data-model="vidra-2"]').click()
                    cell.locator(".mg-estimate-figures").filter(
                        has_text="Billed duration5 s"
                    ).wait_for()
                changes: dict[str, list[float]] = {"studio": [], "studio0": [], "base": []}
                duration_select = "[data-field=duration_seconds] select"
                for i in range(args.repeats * 2):
                    seconds = 10 if i % 2 == 0 else 5
                    changes["studio"].append(
                        time_change(1, duration_select, str(seconds), studio_billed(seconds))
                    )
                    changes["studio0"].append(
                        time_change(5, duration_select, str(seconds), studio_billed(seconds))
                    )
                    changes["base"].append(
                        time_change(
                            2, ".bl-duration select", str(seconds), baseline_billed(seconds)
                        )
                    )
                results["estimate refresh (studio debounce 0.3 s)"] = (
                    changes["studio"],
                    changes["base"],
                )
                results["estimate refresh (studio debounce 0)"] = (
                    changes["studio0"],
                    changes["base"],
                )
                # the price on screen after a change, against a plain Label update (40 each)
                notebook.run_cell(LABEL_CELL)
                notebook.wait_cell_done(LABEL_CELL)
                shown: tuple[list[float], list[float]] = ([], [])
                for i in range(40 + 2):  # the first two of each are a warm-up
                    seconds = 10 if i % 2 == 0 else 5
                    took = (
                        time_change(1, duration_select, str(seconds), studio_priced(seconds)),
                        time_change(
                            LABEL_CELL,
                            ".bl-label-duration select",
                            str(seconds),
                            label_priced(seconds),
                        ),
                    )
                    if i >= 2:
                        shown[0].append(took[0])
                        shown[1].append(took[1])
                    # the next change starts from a settled form (the service's figure in)
                    page.evaluate(WAIT_FOR, [notebook.name, 1, studio_billed(seconds)])
                results["price on screen after a change (goal 1.0)"] = shown

                def side_by_side(*cells: tuple[int, str]) -> list[list[float]]:
                    """A warm-up of each cell, then runs of every cell in turn."""
                    for cell in cells:
                        time_cell(*cell)
                    timed: list[list[float]] = [[] for _ in cells]
                    for _ in range(max(3, args.repeats // 2)):
                        for runs, cell in zip(timed, cells, strict=True):
                            runs.append(time_cell(*cell))
                    return timed

                gallery, careful, widgets = side_by_side(
                    (3, GALLERY_READY),
                    (4, BASELINE_GALLERY_READY),
                    (WIDGET_GALLERY_CELL, WIDGET_GALLERY_READY),
                )
                results["gallery render, 200 outputs"] = (gallery, careful)
                results["gallery render, 200 outputs (obvious way)"] = (gallery, widgets)
                # the comparison grid: 10 prompts x 5 models, run once, shown again each time
                notebook.run_cell(6)
                notebook.wait_cell_done(6, timeout=300_000)
                grid, grid_baseline = side_by_side((7, GRID_READY), (8, BASELINE_GRID_READY))
                results["comparison grid 10x5, until interactive"] = (grid, grid_baseline)
                loaded = [page.evaluate(LOADED_MEDIA, [notebook.name, i]) for i in (7, 8)]
                with contextlib.suppress(Exception):
                    lab.close_all()
                browser.close()
        finally:
            server.stop()

    head = "measured in Chromium (ms: median [min..max])"
    print(f"\n{head:44} {'mediagen':>22} {'ipywidgets':>22} {'ratio':>6}")
    for name, (ours, baseline) in results.items():
        ratio = statistics.median(ours) / statistics.median(baseline)
        print(f"{name:44} {spread(ours):>22} {spread(baseline):>22} {ratio:6.2f}")
    print("ratio = median mediagen / median plain-ipywidgets baseline, measured in the same run;")
    print(
        f"{args.repeats} repeats ({args.repeats * 6} for the cell run,"
        f" {max(3, args.repeats // 2)} for the gallery and the grid)."
    )
    print("baselines:")
    for name in results:
        print(f"  {name}: {BASELINES[name]}")
    print(
        f"comparison grid 10x5: {loaded[0]} of 50 media hold their bytes when interactive"
        f" (the rest load when scrolled to); the GridBox baseline holds {loaded[1]}"
    )


if __name__ == "__main__":
    main()

"""Widget benchmark in marimo, measured in the browser: the studio beside a plain anywidget
doing the same, as ``bench_widgets.py`` measures it in JupyterLab.

One sandbox (speed 0), ``marimo run`` of a two-cell app on loopback (the harness of
``tests/ui/test_marimo.py``) and Debian's Chromium. marimo renders every anywidget in a shadow
root of its own, so the page is searched through them. Timed in the page with
``performance.now()``, repeated, the runs of each side alternating; the medians are printed with
their ratio to the plain anywidget measured in the same run:

- app open -> studio interactive (a marimo app runs its cells when a page opens it: the picker
  lists the catalog, Submit is on screen), against a plain anywidget whose cell fetches the
  catalog with httpx and whose view draws kind buttons, a search box, a select of the models,
  a prompt, a duration select, a price and a button;
- price on screen after a change (vidra-2's duration 5 <-> 10 s, until the new price shows:
  the choice's provisional price, priced ahead by the kernel from the catalog's price tables
  and shown by the page without waiting for the kernel), against the plain
  anywidget's duration select whose change the kernel answers with the price.

    python benchmarks/bench_marimo.py               # about a minute on 2 cores
    python benchmarks/bench_marimo.py --repeats 9

Nothing here asserts a time; the ratios are for reading (lower is better for mediagen).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from _browser import arguments, require_chromium, spread

APP = """
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo
    import mediagen

    client = mediagen.Client()
    return client, mediagen, mo


@app.cell
def _(client, mediagen, mo):
    {cell}
    return


if __name__ == "__main__":
    app.run()
"""

STUDIO_CELL = "view = mo.ui.anywidget(mediagen.studio(client))\n    view"

BASELINE_CELL = '''import anywidget, httpx, os, traitlets

    class Plain(anywidget.AnyWidget):
        _esm = """
        function render({ model, el }) {
          const kinds = ["all", "image", "video", "audio"].map((k) => {
            const b = document.createElement("button"); b.textContent = k; return b; });
          const search = document.createElement("input");
          const select = document.createElement("select");
          select.size = 10;
          for (const m of model.get("models")) select.add(new Option(m.name, m.id));
          const prompt = document.createElement("textarea"); prompt.value = "A red fox";
          const duration = document.createElement("select");
          duration.className = "bl-duration";
          for (const s of [5, 10]) duration.add(new Option(String(s), String(s)));
          duration.onchange = () => { model.set("duration", Number(duration.value));
            model.save_changes(); };
          const price = document.createElement("div"); price.className = "bl-price";
          const show = () => { price.textContent = model.get("price"); };
          model.on("change:price", show); show();
          const submit = document.createElement("button"); submit.textContent = "Submit";
          const root = document.createElement("div"); root.className = "bl-ui";
          root.append(...kinds, search, select, prompt, duration, price, submit);
          el.append(root);
        }
        export default { render };
        """
        models = traitlets.List().tag(sync=True)
        duration = traitlets.Int(5).tag(sync=True)
        price = traitlets.Unicode("30 credits").tag(sync=True)

        @traitlets.observe("duration")
        def _priced(self, change):
            self.price = f"{change.new * 6} credits"

    http = httpx.Client(base_url=os.environ["MEDIAGEN_BASE_URL"],
                        headers={"Authorization": "Bearer " + os.environ["MEDIAGEN_API_KEY"]})
    view = mo.ui.anywidget(Plain(models=http.get("/v1/models").json()["data"]))
    view'''

#: vidra-2, text to video, 720p with audio: 6 credits a second
PRICE = {5: 30, 10: 60}

# ``deep(selector)``: every match in the page and in its shadow roots (marimo's widgets)
DEEP = """window.deep = (selector, root = document) => {
    const found = [...root.querySelectorAll(selector)];
    for (const node of root.querySelectorAll('*')) {
        if (node.shadowRoot) found.push(...deep(selector, node.shadowRoot));
    }
    return found;
};
window.until = async (ready, what, seconds = 120) => {
    const end = performance.now() + seconds * 1000;
    while (!ready()) {
        if (performance.now() > end) throw new Error(`not on screen in ${seconds} s: ${what}`);
        await new Promise((r) => setTimeout(r, 2));
    }
};"""

STUDIO_READY = """() => { const pick = deep('.mg-picker')[0];
    return pick && deep('[role=option]', pick).length >= 13 && deep('.mg-estimate button')[0]; }"""
BASELINE_READY = """() => { const ui = deep('.bl-ui')[0];
    return ui && ui.querySelectorAll('select option').length >= 13
        && ui.querySelector('button'); }"""

TIME_CHANGE = """async ([select, value, done]) => {
    const node = deep(select)[0];
    const ready = new Function(done);
    const start = performance.now();
    const option = [...node.options].find((o) => o.textContent.trim() === value);
    node.value = option.value;
    node.dispatchEvent(new Event('change', {bubbles: true}));
    await until(ready, done);
    return performance.now() - start;
}"""


def studio_priced(seconds: int) -> str:
    return f"""return deep('.mg-estimate .mg-estimate-price')
        .some((n) => / {PRICE[seconds]} credits/.test(' ' + n.textContent.replace('≈', '')));"""


def baseline_priced(seconds: int) -> str:
    return f"""const p = deep('.bl-price')[0];
        return p && p.textContent.trim() === '{PRICE[seconds]} credits';"""


def studio_settled(seconds: int) -> str:
    return f"""const f = deep('.mg-estimate .mg-estimate-figures')[0];
        return f && !f.classList.contains('mg-stale')
            && f.textContent.includes('Billed duration{seconds} s');"""


def main() -> None:
    args = arguments(__doc__)
    require_chromium()

    from playwright.sync_api import sync_playwright
    from test_marimo import marimo_serving

    from conftest import CHROMIUM, CHROMIUM_ARGS
    from mediagen_sandbox.testing import running_sandbox

    results: dict[str, tuple[list[float], list[float]]] = {}
    with running_sandbox(speed=0.0) as sandbox, tempfile.TemporaryDirectory() as tmp:
        tenant = sandbox.new_tenant(balance=100_000, plan="enterprise")
        base = Path(tmp)
        env = {
            **os.environ,
            "MEDIAGEN_BASE_URL": sandbox.base_url,
            "MEDIAGEN_API_KEY": tenant.api_key,
            "MEDIAGEN_CACHE_DIR": str(base / "cache"),
            "XDG_CONFIG_HOME": str(base / "config"),
            "XDG_CACHE_HOME": str(base / "xdg-cache"),
        }
        apps = {}
        for name, cell in (("studio", STUDIO_CELL), ("plain", BASELINE_CELL)):
            (base / name).mkdir()
            apps[name] = base / name / f"{name}.py"
            apps[name].write_text(APP.format(cell=cell), encoding="utf-8")
        with (
            marimo_serving("run", apps["studio"], env, base / "studio" / "marimo.log") as ours,
            marimo_serving("run", apps["plain"], env, base / "plain" / "marimo.log") as plain,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.set_default_timeout(120_000)
            page.add_init_script(DEEP)
            page.on("pageerror", lambda e: print("browser error:", e, file=sys.stderr))

            def open_until(url: str, ready: str) -> float:
                """From the page's navigation to the predicate: the app's cells run meanwhile."""
                page.goto(url)
                page.wait_for_function(ready, polling=5)
                return page.evaluate("performance.now()")

            open_until(ours, STUDIO_READY)  # warm-up: first imports are not what is compared
            open_until(plain, BASELINE_READY)
            opened: tuple[list[float], list[float]] = ([], [])
            for _ in range(args.repeats):
                opened[0].append(open_until(ours, STUDIO_READY))
                opened[1].append(open_until(plain, BASELINE_READY))
            results["app open -> studio interactive"] = opened

            # the price after a change: each app in a page of its own, vidra-2 in the studio
            studio_page = page
            studio_page.goto(ours)
            studio_page.wait_for_function(STUDIO_READY, polling=5)
            studio_page.locator('.mg-picker [role=option][data-model="vidra-2"]').click()
            studio_page.wait_for_function(f"() => {{ {studio_settled(5)} }}", polling=5)
            plain_page = browser.new_page(viewport={"width": 1280, "height": 1000})
            plain_page.set_default_timeout(120_000)
            plain_page.add_init_script(DEEP)
            plain_page.goto(plain)
            plain_page.wait_for_function(BASELINE_READY, polling=5)
            shown: tuple[list[float], list[float]] = ([], [])
            duration = "[data-field=duration_seconds] select"
            for i in range(args.repeats * 2 + 2):  # the first two of each are a warm-up
                seconds = 10 if i % 2 == 0 else 5
                took = (
                    studio_page.evaluate(TIME_CHANGE, [duration, str(seconds),
                                                       studio_priced(seconds)]),
                    plain_page.evaluate(TIME_CHANGE, [".bl-duration", str(seconds),
                                                      baseline_priced(seconds)]),
                )  # fmt: skip
                if i >= 2:
                    shown[0].append(took[0])
                    shown[1].append(took[1])
                # the next change starts from a settled form (the service's figure in)
                studio_page.wait_for_function(f"() => {{ {studio_settled(seconds)} }}", polling=5)
            results["price on screen after a change"] = shown
            browser.close()

    head = "measured in Chromium, marimo (ms: median [min..max])"
    print(f"\n{head:52} {'mediagen':>22} {'anywidget':>22} {'ratio':>6}")
    for name, (mine, baseline) in results.items():
        ratio = statistics.median(mine) / statistics.median(baseline)
        print(f"{name:52} {spread(mine):>22} {spread(baseline):>22} {ratio:6.2f}")
    print("ratio = median mediagen / median plain-anywidget baseline, measured in the same run;")
    print(f"{args.repeats} repeats ({args.repeats * 2} changes for the price).")


if __name__ == "__main__":
    main()

"""mediagen's JupyterLab extension in real JupyterLab and Chromium, against the real sandbox.

The Generations sidebar, the credits status item, the viewer, Insert and the spend panel, fed by
the server extension's one poller. Every test fails on any browser console error, and the API
key must never reach the page: not in a response, the DOM, localStorage or the console.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from lab_harness import LabServer, write_notebook
from playwright.sync_api import expect
from test_journeys import axe_js, axe_violations, dark_theme  # noqa: F401

from mediagen import Client

SIDEBAR = "#mediagen-generations"
STATUS = "#mediagen-status"
HANDLERS = [
    ("GET", "state"),
    ("GET", "events?subscriber=t&since=-1"),
    ("DELETE", "events?subscriber=t"),
    ("GET", "poller"),
    ("GET", "spend"),
    ("GET", "media/0123/0"),
    ("HEAD", "media/0123/0"),
]


def test_every_handler_refuses_a_request_without_the_servers_token(lab_server):
    with httpx.Client(base_url=f"{lab_server.url}/mediagen/api/", timeout=10) as plain:
        for method, path in HANDLERS:
            assert plain.request(method, path).status_code == 403, (method, path)
        token = {"Authorization": f"token {lab_server.token}"}
        answer = plain.get("state", headers=token)
        assert answer.status_code == 200
        assert answer.json()["configured"] is True
        # a page that knows a later version than the server (the server restarted) is answered
        # at once, not after the long-poll's hold
        started = time.monotonic()
        ahead = plain.get("events?subscriber=restarted&since=999999", headers=token)
        assert ahead.status_code == 200
        assert time.monotonic() - started < 5
        plain.delete("events?subscriber=restarted", headers=token)
        # media of a generation the service does not have, by an id it refuses to look up or
        # by one it looks up in vain, is not there (404), not a failure of the service (502)
        for media in ("media/0123/0", "media/00000000-0000-4000-8000-000000000000/0"):
            for method in ("GET", "HEAD"):
                assert plain.request(method, media, headers=token).status_code == 404, media


def test_sidebar_and_status_item_render(lab):
    lab.open("sidebar-render.ipynb", ["1 + 1"])
    page = lab.page
    page.evaluate("window.jupyterapp.shell.activateById('mediagen-generations')")
    expect(page.locator(SIDEBAR)).to_be_visible()
    expect(page.locator(STATUS)).to_be_visible()
    expect(page.locator(SIDEBAR).get_by_role("searchbox")).to_be_visible()
    assert [m for m in lab.console if m.startswith("error")] == []


# -- live rows, the status item and the key ------------------------------------------------

SUBMIT = (
    "import mediagen as mg\n"
    "gen = mg.Client().images.create(model='pixel-pro', prompt='{prompt}', quality='low')\n"
    "print(gen.id)"
)
ANOTHER_PROCESS = (
    "import mediagen as mg\n"
    "print(mg.Client(journal=False).images.create(model='pixel-pro', prompt='from a script',"
    " quality='low').id)"
)


def row(page, generation_id: str):
    return page.locator(f'{SIDEBAR} [data-generation-id="{generation_id}"]')


def show_sidebar(page) -> None:
    page.evaluate("window.jupyterapp.shell.activateById('mediagen-generations')")
    expect(page.locator(SIDEBAR)).to_be_visible()


@contextlib.contextmanager
def own_server(
    lab, base: Path, env: dict[str, str], url: str = "lab?reset", notebooks=None, **options
):
    """A JupyterLab (or Notebook 7) server of its own, holding ``notebooks`` (name: cells), and
    a fresh page on ``url``: (server, page). The page must log no console error; the server
    stops at the end."""
    server = LabServer(base, env, **options)
    for name, cells in (notebooks or {}).items():
        write_notebook(server.root / name, cells)
    context = lab.page.context.browser.new_context(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        separator = "&" if "?" in url else "?"
        page.goto(f"{server.url}/{url}{separator}token={server.token}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started")
        yield server, page
    finally:
        context.close()
        server.stop()
    assert errors == []


def console_errors(lab, since: int) -> list[str]:
    return [m for m in lab.console[since:] if m.startswith("error")]


def printed(notebook, index: int) -> str:
    notebook.wait_cell_done(index)
    return notebook.output(index).first.inner_text().strip()


@pytest.fixture
def watched(lab):
    """Every response the page gets from here on (their bodies are read at the end)."""
    responses: list = []

    def keep(response) -> None:
        responses.append(response)

    lab.page.on("response", keep)
    start = len(lab.console)
    yield responses
    lab.page.remove_listener("response", keep)
    assert console_errors(lab, start) == []


def assert_key_never_reached_the_page(page, key: str, responses, console: list[str]) -> None:
    needle = key.encode()
    read = 0
    for response in responses:
        try:
            body = response.body()
        except Exception:  # noqa: S112 (a redirect or an aborted media range has no body)
            continue
        read += 1
        assert needle not in body, response.url
        assert key not in response.url
        assert key not in str(response.headers)
    assert read > 10, "too few responses were read to mean anything"
    assert key not in page.content()
    assert key not in page.evaluate("() => JSON.stringify({...localStorage})")
    assert key not in page.evaluate("() => JSON.stringify({...sessionStorage})")
    assert not any(key in message for message in console)


def test_jobs_from_a_kernel_and_from_another_process_appear_live(
    lab, lab_env, lab_tenant, sandbox, watched
):
    notebook = lab.open("sidebar-live.ipynb", [SUBMIT.format(prompt="a kite [[slow:4]]")])
    page = lab.page
    show_sidebar(page)
    notebook.run_cell(0)
    kernel_job = printed(notebook, 0)
    started = time.monotonic()
    expect(row(page, kernel_job)).to_have_count(1, timeout=3_000)
    assert time.monotonic() - started < 3.0
    expect(row(page, kernel_job)).to_have_attribute("data-status", "pending")
    expect(row(page, kernel_job).locator("progress")).to_have_count(1)
    expect(row(page, kernel_job)).to_have_attribute("data-status", "completed", timeout=15_000)
    expect(row(page, kernel_job).locator("img")).to_have_count(1)

    script = subprocess.run(
        [sys.executable, "-c", ANOTHER_PROCESS],
        env={**os.environ, **lab_env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    script_job = script.stdout.strip()
    started = time.monotonic()
    expect(row(page, script_job)).to_have_count(1, timeout=3_000)
    assert time.monotonic() - started < 3.0
    # newest first
    ids = page.locator(f"{SIDEBAR} [data-generation-id]").evaluate_all(
        "(rows) => rows.map((r) => r.dataset.generationId)"
    )
    assert ids.index(script_job) < ids.index(kernel_job)

    # the status item: GET /v1/credits after the charges, then after a top-up
    client = Client(api_key=lab_tenant.api_key, base_url=sandbox.base_url, journal=False)
    status = page.locator(STATUS)
    expect(row(page, script_job)).to_have_attribute("data-status", "completed", timeout=15_000)
    expect(status).to_have_attribute(
        "data-balance", str(_number(client.credits.get().balance)), timeout=20_000
    )
    sandbox.admin.grant(lab_tenant.org_id, 250)
    expect(status).to_have_attribute(
        "data-balance", str(_number(client.credits.get().balance)), timeout=20_000
    )
    expect(status).to_contain_text("credits")
    assert_key_never_reached_the_page(page, lab_tenant.api_key, watched, lab.console)


def _number(value: float) -> float | int:
    """As JavaScript's String(n) writes it: 99.5, or 100 for 100.0."""
    return int(value) if float(value).is_integer() else value


EDIT = {"model": "vidra-edit", "source_video": "asset_example_video"}


def test_the_status_item_is_live_with_the_sidebar_never_opened(
    tmp_path_factory, lab_env, lab_tenant, sandbox, lab
):
    """Its own credits-only subscription: the balance and a top-up without the sidebar, and
    no listing of generations until the sidebar shows; then a running flat-priced job's row
    says what its estimate reserved."""
    client = Client(api_key=lab_tenant.api_key, base_url=sandbox.base_url, journal=False)
    root = tmp_path_factory.mktemp("status-only")
    with own_server(lab, root, lab_env) as (server, page):
        status = page.locator(STATUS)
        expect(status).to_have_attribute(
            "data-balance", str(_number(client.credits.get().balance)), timeout=10_000
        )
        sandbox.admin.grant(lab_tenant.org_id, 250)
        expect(status).to_have_attribute(
            "data-balance", str(_number(client.credits.get().balance)), timeout=20_000
        )
        expect(page.locator(SIDEBAR)).to_be_hidden()
        figures = server.api("/mediagen/api/poller")
        assert figures["subscribers"] == 1
        assert figures["watching_generations"] is False
        listed = [(p, q) for _, _, p, q in figures["requests"] if p.startswith("/v1/generations")]
        # today's spend (created since midnight) only: no newest page, no job's own GET
        assert listed, figures["requests"]
        assert all(p == "/v1/generations" and "created_after" in q for p, q in listed), listed

        quoted = client.models.estimate_request(EDIT).credits_after_discount
        job = client.videos.create(**EDIT, prompt="a quoted edit [[slow:12]]")
        show_sidebar(page)
        cost = row(page, job.id).locator(".mg-lab-cost")
        expect(cost).to_have_text(f"≈ {_number(quoted)} credits reserved", timeout=6_000)
        expect(row(page, job.id)).to_have_attribute("data-status", "completed", timeout=30_000)
        expect(cost).to_have_text(f"{_number(quoted)} credits")


def test_two_tabs_share_one_poller(lab, lab_server, watched):
    page = lab.page
    lab.open("sidebar-tabs.ipynb", ["1 + 1"])
    show_sidebar(page)
    page.wait_for_function(
        "() => document.querySelectorAll('#mediagen-generations [data-generation-id]').length > 0"
    )
    before = lab_server.api("/mediagen/api/poller")
    assert before["running"]
    assert before["subscribers"] == 1
    second = page.context.new_page()
    errors: list[str] = []
    second.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        second.goto(f"{lab_server.url}/lab?token={lab_server.token}&reset")
        second.wait_for_function("window.jupyterapp && window.jupyterapp.started")
        show_sidebar(second)
        second.wait_for_function(
            "() => document.querySelectorAll("
            "'#mediagen-generations [data-generation-id]').length > 0"
        )
        time.sleep(6.5)
        after = lab_server.api("/mediagen/api/poller")
        assert after["subscribers"] == 2
        assert after["pollers_started"] == before["pollers_started"]
        # one list of the key's generations every 2 s, not one per tab
        window = [t for t, _, p, q in after["requests"] if p == "/v1/generations"
                  and "created_after" not in q]  # fmt: skip
        last = window[-1]
        assert len([t for t in window if t > last - 6.0]) <= 4
    finally:
        second.close()
    assert errors == []


# -- the viewer, Insert, Copy id, filters, the spend panel ----------------------------------

MAKE_MEDIA = (
    "import mediagen as mg\n"
    "c = mg.Client()\n"
    "video = c.videos.create(**c.models.get('vidra-2').example('text_to_video'))\n"
    "speech = c.audio.create(model='voxa-tts', text='Hello from the sidebar.', voice_name='Aria')\n"
    "image = c.images.create(model='pixel-pro', prompt='a viewer kite', quality='low')\n"
    "failed = c.images.create(model='pixel-pro', prompt='no [[fail:safety]]', quality='low')\n"
    "print(video.id, speech.id, image.id, failed.id)"
)


def settled(page, generation_id: str, status: str = "completed"):
    found = row(page, generation_id)
    expect(found).to_have_attribute("data-status", status, timeout=60_000)
    return found


def test_viewer_insert_copy_and_filters(lab, watched):
    page = lab.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    notebook = lab.open("sidebar-media.ipynb", [MAKE_MEDIA])
    show_sidebar(page)
    notebook.run_cell(0)
    video, speech, image, failed = printed(notebook, 0).split()
    for generation_id in (video, speech, image):
        settled(page, generation_id)
    settled(page, failed, "failed")

    assert_rows_preview_their_media(page, video, speech)

    # the viewer: the image shows, fitted to its pane; the video and the speech play
    settled(page, image).locator(".mg-lab-open").click()
    viewer = page.locator(f"#mediagen-viewer-{image}")
    expect(viewer.locator("img")).to_be_visible()
    page.wait_for_function(
        "(id) => document.querySelector(`#mediagen-viewer-${id} img`).naturalWidth > 0", arg=image
    )
    assert_image_fits_its_pane(page, page.locator(f'.mg-lab-viewer[data-generation-id="{image}"]'))
    for generation_id, kind in ((video, "video"), (speech, "audio")):
        row(page, generation_id).locator(".mg-lab-open").click()
        player = page.locator(f"#mediagen-viewer-{generation_id} {kind}")
        expect(player).to_have_count(1)
        state = player.evaluate(
            """async (el) => {
                el.muted = true;
                await el.play();
                const start = performance.now();
                while (el.readyState < 2 && performance.now() - start < 10000) {
                    await new Promise((r) => setTimeout(r, 50));
                }
                return {paused: el.paused, readyState: el.readyState};
            }"""
        )
        assert state["paused"] is False, state
        assert state["readyState"] >= 2, state
    # each kind of tab wears its own icon
    assert tab_icon(page, f"mediagen-viewer-{speech}") != tab_icon(page, f"mediagen-viewer-{image}")
    assert tab_icon(page, f"mediagen-viewer-{video}") != tab_icon(page, f"mediagen-viewer-{image}")

    # Insert: a cell that binds the generation, and it runs
    page.evaluate(
        "(path) => window.jupyterapp.shell.activateById(findPanel(path).id)", notebook.name
    )
    row(page, image).get_by_role("button", name="Insert").click()
    cells = page.locator(f"#{notebook._panel_id()} .jp-Notebook .jp-Cell")
    expect(cells).to_have_count(2)
    assert f'generations.get("{image}")' in cells.nth(1).inner_text()
    notebook.run_cell(1)
    notebook.wait_cell_done(1)
    expect(notebook.output(1).first).to_contain_text("completed")
    assert (
        notebook.output(1).locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    )

    # Copy id
    row(page, image).get_by_role("button", name="Copy id").click()
    expect(row(page, image).get_by_role("button", name="Copy id")).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == image

    # filters and search
    sidebar = page.locator(SIDEBAR)
    sidebar.get_by_role("button", name="Failed").click()
    expect(sidebar.locator("[data-generation-id]:not([data-status=failed])")).to_have_count(0)
    expect(row(page, failed)).to_have_count(1)
    sidebar.get_by_role("button", name="Failed").click()
    sidebar.get_by_role("combobox", name="Model").select_option("voxa-tts")
    expect(sidebar.locator("[data-generation-id]")).not_to_have_count(0)
    expect(row(page, image)).to_have_count(0)
    expect(row(page, speech)).to_have_count(1)
    sidebar.get_by_role("combobox", name="Model").select_option("")
    sidebar.get_by_role("searchbox").fill("viewer kite")
    expect(sidebar.locator("[data-generation-id]")).to_have_count(1)
    expect(row(page, image)).to_have_count(1)
    sidebar.get_by_role("searchbox").fill("")
    sidebar.get_by_role("button", name="Today").click()
    expect(row(page, video)).to_have_count(1)
    sidebar.get_by_role("button", name="Today").click()

    # filters that let nothing through say so, and one click clears them all
    empty = sidebar.locator(".mg-lab-empty")
    expect(empty).to_be_hidden()
    sidebar.get_by_role("button", name="Failed").click()
    sidebar.get_by_role("searchbox").fill("viewer kite")
    expect(sidebar.locator("[data-generation-id]")).to_have_count(0)
    expect(empty).to_be_visible()
    expect(empty).to_contain_text("No generations match these filters.")
    expect(sidebar.locator(".mg-lab-count")).to_be_hidden()
    empty.get_by_role("button", name="Clear filters").click()
    expect(empty).to_be_hidden()
    expect(sidebar.get_by_role("searchbox")).to_have_value("")
    expect(sidebar.get_by_role("button", name="Failed")).to_have_attribute("aria-pressed", "false")
    expect(sidebar.get_by_role("combobox", name="Model")).to_have_value("")
    for generation_id in (video, speech, image, failed):
        expect(row(page, generation_id)).to_have_count(1)
    colours = {
        status: row(page, generation_id)
        .locator(".mg-lab-status")
        .evaluate("(el) => getComputedStyle(el).color")
        for status, generation_id in (("completed", image), ("failed", failed))
    }
    assert colours["completed"] != colours["failed"]


def assert_rows_preview_their_media(page, video: str, speech: str) -> None:
    """A video row shows a frame, not a black box; an audio row a play/pause button big
    enough to hit, that plays and pauses."""
    player = row(page, video).locator("video")
    assert player.evaluate("(el) => el.preload") == "metadata"
    player.evaluate(
        """(el) => new Promise((resolve, reject) => {
            const start = performance.now();
            const wait = () => el.readyState >= 2 ? resolve()
                : performance.now() - start > 15000 ? reject(new Error('no frame'))
                : setTimeout(wait, 50);
            wait();
        })"""
    )
    play = row(page, speech).get_by_role("button", name=re.compile("^Play the audio"))
    expect(play).to_be_visible()
    box = play.bounding_box()
    assert box is not None
    assert box["width"] >= 32, box
    assert box["height"] >= 32, box
    audio = row(page, speech).locator("audio")
    audio.evaluate("(el) => { el.muted = true; }")
    play.click()
    pause = row(page, speech).get_by_role("button", name=re.compile("^Pause the audio"))
    expect(pause).to_be_visible()
    assert audio.evaluate("(el) => el.paused") is False
    pause.click()
    expect(play).to_be_visible()
    assert audio.evaluate("(el) => el.paused") is True


def assert_image_fits_its_pane(page, viewer) -> None:
    """Fitted, not cropped or scrolled: within the pane however small the window gets."""
    image = viewer.locator("img")
    style = image.evaluate(
        "(el) => { const s = getComputedStyle(el); return [s.maxWidth, s.maxHeight, s.objectFit]; }"
    )
    assert style == ["100%", "100%", "contain"], style
    size = page.viewport_size
    page.set_viewport_size({"width": 900, "height": 360})
    try:
        page.wait_for_timeout(300)  # the dock panel lays out on the resize
        pane, shown = viewer.bounding_box(), image.bounding_box()
        assert pane is not None
        assert shown is not None
        assert shown["y"] + shown["height"] <= pane["y"] + pane["height"] + 1, (pane, shown)
        assert shown["x"] + shown["width"] <= pane["x"] + pane["width"] + 1, (pane, shown)
        assert viewer.evaluate("(el) => el.scrollHeight <= el.clientHeight + 1")
    finally:
        page.set_viewport_size(size)


def tab_icon(page, widget_id: str) -> str:
    """The shape a tab's icon draws (its SVG paths)."""
    return page.locator(f'.lm-TabBar-tab[data-id="{widget_id}"] svg').first.evaluate(
        "(svg) => [...svg.querySelectorAll('path')].map((p) => p.getAttribute('d')).join(' ')"
    )


def test_spend_panel_from_the_status_item(lab, lab_tenant, sandbox, watched):
    page = lab.page
    client = Client(api_key=lab_tenant.api_key, base_url=sandbox.base_url, journal=False)
    client.images.create(model="pixel-pro", prompt="a paid kite", quality="low").wait()
    lab.open("sidebar-spend.ipynb", ["1 + 1"])
    show_sidebar(page)
    expect(page.locator(STATUS)).to_have_attribute("data-balance", re.compile(r"\d"))
    page.locator(STATUS).click()
    panel = page.locator("#mediagen-spend-panel")
    table = panel.get_by_role("table")
    expect(table).to_be_visible()
    charged = round(sum(g.credits_charged or 0 for g in client.generations.list()), 2)
    expect(table.locator("caption")).to_contain_text(f"{charged:g} credits")
    assert table.locator("tbody tr").count() >= 1
    assert tab_icon(page, "mediagen-spend-panel") != tab_icon(page, "mediagen-generations")


def test_the_filters_and_refresh_are_a_jupyterlab_toolbar(
    lab, lab_server, lab_tenant, sandbox, watched
):
    """JupyterLab's own toolbar, toggle buttons and select; Refresh reads the credits at once,
    not at the poller's next 15 s turn."""
    page = lab.page
    lab.open("sidebar-toolbar.ipynb", ["1 + 1"])
    show_sidebar(page)
    toolbar = page.locator(f"{SIDEBAR} .jp-Toolbar")
    expect(toolbar).to_be_visible()
    for name in ("Running", "Failed", "Today"):
        button = toolbar.get_by_role("button", name=name)
        expect(button).to_have_class(re.compile("jp-ToolbarButton"))
        expect(button).to_have_attribute("aria-pressed", "false")
    running = toolbar.get_by_role("button", name="Running")
    running.click()
    expect(running).to_have_attribute("aria-pressed", "true")
    running.click()
    expect(running).to_have_attribute("aria-pressed", "false")
    expect(toolbar.locator(".jp-HTMLSelect select[aria-label=Model]")).to_be_visible()
    refresh = toolbar.get_by_role("button", name=re.compile("^Refresh"))
    expect(toolbar.locator("jp-button.jp-ToolbarButtonComponent.mg-lab-refresh")).to_have_count(1)
    assert refresh.get_attribute("aria-pressed") is None  # an action, not a toggle

    client = Client(api_key=lab_tenant.api_key, base_url=sandbox.base_url, journal=False)
    status = page.locator(STATUS)
    # just after the poller's own read of the credits, its next one is 15 s away
    last = _last_credits_read(lab_server)
    deadline = time.monotonic() + 30
    while _last_credits_read(lab_server) == last and time.monotonic() < deadline:
        time.sleep(0.1)
    sandbox.admin.grant(lab_tenant.org_id, 50)
    refresh.click()
    expect(status).to_have_attribute(
        "data-balance", str(_number(client.credits.get().balance)), timeout=4_000
    )


def _last_credits_read(server) -> float | None:
    reads = [
        t for t, _, p, _ in server.api("/mediagen/api/poller")["requests"] if p == "/v1/credits"
    ]
    return reads[-1] if reads else None


def test_a_running_job_without_a_forecast_shows_an_indeterminate_bar_and_a_spinner(
    tmp_path_factory, tenant_factory, sandbox, lab
):
    """A model no job of this key has finished has no expected duration: the bar moves without
    claiming how far along it is, the status reads in the running colour, the preview spins.
    Once one finished, the next job of that model gets a bar toward its forecast."""
    tenant = tenant_factory(balance=1000)
    env = {"MEDIAGEN_API_KEY": tenant.api_key, "MEDIAGEN_BASE_URL": sandbox.base_url}
    client = Client(journal=False, **_connection(env))
    with own_server(lab, tmp_path_factory.mktemp("indeterminate"), env) as (_, page):
        show_sidebar(page)
        job = client.images.create(model="pixel-pro", prompt="a first kite [[slow:8]]",
                                   quality="low")  # fmt: skip
        found = row(page, job.id)
        expect(found).to_have_attribute("data-status", "pending", timeout=6_000)
        bar = found.locator("progress")
        expect(bar).to_have_count(1)
        time.sleep(1.5)  # the bars' ticker ran
        assert bar.get_attribute("value") is None
        assert bar.evaluate("(el) => el.matches(':indeterminate')")
        spinner = found.locator(".mg-lab-spinner")
        expect(spinner).to_be_visible()
        assert spinner.evaluate("(el) => getComputedStyle(el).animationName") == "mg-lab-spin"
        brand, running = found.locator(".mg-lab-status").evaluate(
            """(el) => {
                const probe = document.createElement('span');
                probe.style.color = 'var(--jp-brand-color1)';
                el.parentNode.appendChild(probe);
                const colours = [getComputedStyle(probe).color, getComputedStyle(el).color];
                probe.remove();
                return colours;
            }"""
        )
        assert running == brand
        expect(found).to_have_attribute("data-status", "completed", timeout=30_000)
        assert (
            found.locator(".mg-lab-status").evaluate("(el) => getComputedStyle(el).color") != brand
        )

        second = client.images.create(model="pixel-pro", prompt="a second kite [[slow:8]]",
                                      quality="low")  # fmt: skip
        expect(row(page, second.id).locator("progress")).to_have_attribute(
            "value", re.compile(r"^0(\.\d+)?$"), timeout=6_000
        )


def test_todays_spend_moves_with_the_balance_with_the_sidebar_hidden(
    tmp_path_factory, tenant_factory, sandbox, lab
):
    """The status bar alone: when a job's charge moves the balance, today's spend moves in the
    same few seconds, not at its own once-a-minute sum."""
    tenant = tenant_factory(balance=1000)
    env = {"MEDIAGEN_API_KEY": tenant.api_key, "MEDIAGEN_BASE_URL": sandbox.base_url}
    client = Client(journal=False, **_connection(env))
    with own_server(lab, tmp_path_factory.mktemp("spend-follows"), env) as (_, page):
        status = page.locator(STATUS)
        expect(status).to_have_attribute("data-balance", "1000", timeout=10_000)
        expect(status).to_contain_text("today 0 credits")
        expect(page.locator(SIDEBAR)).to_be_hidden()
        job = client.images.create(model="pixel-pro", prompt="a charged kite", quality="low")
        charged = job.wait().credits_charged
        assert charged
        expect(status).to_have_attribute(
            "data-balance", str(_number(client.credits.get().balance)), timeout=20_000
        )
        expect(status).to_contain_text(f"today {_number(charged)} credit", timeout=3_000)


def test_sidebar_works_by_keyboard_and_passes_axe_in_both_themes(lab, axe_js, watched):  # noqa: F811
    page = lab.page
    notebook = lab.open("sidebar-axe.ipynb", [SUBMIT.format(prompt="an accessible kite")])
    show_sidebar(page)
    notebook.run_cell(0)
    made = printed(notebook, 0)
    settled(page, made)
    sidebar = page.locator(SIDEBAR)
    # keyboard: from the search box, Tab reaches the newest row's buttons; Enter opens it
    sidebar.get_by_role("searchbox").focus()
    page.keyboard.press("Tab")
    expect(row(page, made).locator(".mg-lab-open")).to_be_focused()
    page.keyboard.press("Tab")
    expect(row(page, made).get_by_role("button", name="Insert")).to_be_focused()
    page.keyboard.press("Tab")
    expect(row(page, made).get_by_role("button", name="Copy id")).to_be_focused()
    row(page, made).locator(".mg-lab-open").focus()
    page.keyboard.press("Enter")
    expect(page.locator(f"#mediagen-viewer-{made} img")).to_be_visible()
    show_sidebar(page)
    assert axe_violations(page, axe_js, sidebar) == []
    with dark_theme(page):
        background = sidebar.evaluate("(el) => getComputedStyle(el).backgroundColor")
        assert background != "rgb(255, 255, 255)"
        assert axe_violations(page, axe_js, sidebar) == []
        assert axe_violations(page, axe_js, page.locator(STATUS)) == []


def test_sidebar_in_notebook_7(tmp_path_factory, lab_env, lab):
    made = Client(journal=False, **_connection(lab_env)).images.create(
        model="pixel-pro", prompt="a Notebook 7 kite", quality="low"
    )
    with own_server(
        lab,
        tmp_path_factory.mktemp("nb7-sidebar"),
        lab_env,
        url="notebooks/nb7.ipynb",
        notebooks={"nb7.ipynb": ["1 + 1"]},
        app="notebook",
        app_class="JupyterNotebookApp",
    ) as (_, page):
        page.evaluate(
            "() => window.jupyterapp.shell.expandLeft && window.jupyterapp.shell.expandLeft()"
        )
        page.evaluate("() => window.jupyterapp.shell.activateById('mediagen-generations')")
        expect(page.locator(SIDEBAR)).to_be_visible()
        expect(row(page, made.id)).to_be_visible(timeout=10_000)


def _connection(env: dict[str, str]) -> dict[str, str]:
    return {"api_key": env["MEDIAGEN_API_KEY"], "base_url": env["MEDIAGEN_BASE_URL"]}


def test_without_a_key_the_sidebar_says_how_to_set_one(tmp_path_factory, sandbox, lab):
    no_key = {"MEDIAGEN_API_KEY": "", "MEDIAGEN_BASE_URL": sandbox.base_url}
    with own_server(lab, tmp_path_factory.mktemp("no-key"), no_key) as (server, page):
        show_sidebar(page)
        message = page.locator(f"{SIDEBAR} [role=status]")
        expect(message).to_contain_text("MEDIAGEN_API_KEY")
        expect(message).to_contain_text("mediagen lab")
        assert server.api("/mediagen/api/poller")["pollers_started"] == 0
        # the media handler says what is wrong instead of failing
        with httpx.Client(headers={"Authorization": f"token {server.token}"}) as authed:
            answer = authed.get(f"{server.url}/mediagen/api/media/0123/0", timeout=10)
        assert answer.status_code == 502

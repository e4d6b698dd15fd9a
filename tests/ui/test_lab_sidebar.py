"""mediagen's JupyterLab extension in real JupyterLab and Chromium, against the real sandbox.

The Generations sidebar, the credits status item, the viewer, Insert and the spend panel, fed by
the server extension's one poller. Every test fails on any browser console error, and the API
key must never reach the page: not in a response, the DOM, localStorage or the console.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from playwright.sync_api import expect

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
        answer = plain.get("state", headers={"Authorization": f"token {lab_server.token}"})
    assert answer.status_code == 200
    assert answer.json()["configured"] is True


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
        window = [t for t, _, p in after["requests"] if p == "/v1/generations"]
        last = window[-1]
        assert len([t for t in window if t > last - 6.0]) <= 4
    finally:
        second.close()
    assert errors == []

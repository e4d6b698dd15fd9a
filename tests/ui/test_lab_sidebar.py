"""mediagen's JupyterLab extension in real JupyterLab and Chromium, against the real sandbox.

The Generations sidebar, the credits status item, the viewer, Insert and the spend panel, fed by
the server extension's one poller. Every test fails on any browser console error, and the API
key must never reach the page: not in a response, the DOM, localStorage or the console.
"""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

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

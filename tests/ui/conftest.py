"""Real-browser harness: an isolated JupyterLab 4 server and Debian's Chromium via Playwright.

One server and one browser page per session (a notebook per test, each with its own kernel).
Without /usr/bin/chromium the browser tests are skipped with the command that installs it,
except under CI (env ``CI`` set), where a missing browser is a failure.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_harness import CHROMIUM, CHROMIUM_ARGS, FIND_PANEL, Lab, LabServer, require_chromium
from playwright.sync_api import expect

# What a page shows after a click often waits for the kernel's answer, and a kernel on a
# loaded two-core machine (the other test worker building the docs) can take more than
# Playwright's default 5 s for one: a slow answer is not a missing one. A hang still fails.
expect.set_options(timeout=15_000)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the browser tests and run them last.

    Playwright's sync API keeps an event loop running on the main thread until the session
    ends, so an ``asyncio.run`` in a later test would fail for a reason unrelated to it.
    """
    here = Path(__file__).parent
    browser = []
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            browser.append(item)
    chosen = {id(item) for item in browser}
    items[:] = [item for item in items if id(item) not in chosen] + browser


@pytest.fixture(scope="session")
def lab_tenant(tenant_factory):
    """The tenant whose key the kernels use (one per browser session, plenty of credits)."""
    return tenant_factory(balance=100_000, plan="enterprise")


@pytest.fixture(scope="session")
def lab_env(sandbox, lab_tenant, tmp_path_factory) -> dict[str, str]:
    """Extra environment for the server and its kernels: the sandbox's URL and the key.

    The key reaches kernels only through the environment, never through a notebook's text.
    Tests give each notebook its own ``cache_dir`` (and so its own journal); the default cache
    is a temporary directory, never the user's.
    """
    return {
        "MEDIAGEN_BASE_URL": sandbox.base_url,
        "MEDIAGEN_API_KEY": lab_tenant.api_key,
        "MEDIAGEN_CACHE_DIR": str(tmp_path_factory.mktemp("kernel-cache")),
    }


@pytest.fixture(scope="session")
def lab_server(
    tmp_path_factory: pytest.TempPathFactory, lab_env: dict[str, str]
) -> Iterator[LabServer]:
    require_chromium()
    server = LabServer(tmp_path_factory.mktemp("lab"), lab_env)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def lab(lab_server: LabServer) -> Iterator[Lab]:
    """A browser page on the session's JupyterLab, for one test module. Playwright's sync API
    keeps an event loop running on this thread while it is open, and a test run on the same
    worker after the browser tests (``asyncio.run``, a widget's wait) must not find it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.add_init_script(FIND_PANEL)
        # Safety net: a kernel picker should never appear (kernelspec metadata), but if it does,
        # accept the default instead of hanging.
        page.add_locator_handler(
            page.get_by_role("dialog").filter(has_text="Select Kernel"),
            lambda dialog: dialog.get_by_role("button", name="Select").click(),
        )
        console: list[str] = []
        page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
        lab = Lab(lab_server, page)
        lab.console = console  # type: ignore[attr-defined]
        yield lab
        with contextlib.suppress(Exception):
            lab.close_all()
        context.close()
        browser.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A failed browser test's report ends with what JupyterLab and its kernels printed last
    (a kernel's warnings and tracebacks go there): a failure on a loaded CI machine can then be
    read from the report alone."""
    report = yield
    lab = getattr(item, "funcargs", {}).get("lab")
    if report.failed and isinstance(lab, Lab):
        with contextlib.suppress(OSError):
            tail = lab.server.log_path.read_text(errors="replace")[-6000:]
            report.sections.append(("JupyterLab and kernel log (last lines)", tail))
    return report

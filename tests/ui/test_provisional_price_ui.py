"""The form's price keeps up with the user, in real JupyterLab 4 and Chromium, against the
sandbox: a changed field shows its provisional price (from the catalog's price tables, marked
provisional) while the service's estimate is still on its way, then the service's figure; with
an outdated catalog the service's price wins and the difference is on screen. Any Python
error, error banner or console error fails it."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect
from test_journeys import assert_clean

# long enough that the provisional price is on screen well before the service is even asked
DEBOUNCE_S = 5.0


def form_cell(cache: Path, debounce: float = DEBOUNCE_S) -> str:
    return (
        "import copy, ipywidgets, mediagen\n"
        "from mediagen.widgets import LiveEstimate, RequestForm\n"
        f"client = mediagen.Client(cache_dir={str(cache)!r})\n"
        "form = RequestForm(client.models.get('vidra-2').raw)\n"
        f"estimate = LiveEstimate(client, form, debounce={debounce})\n"
        "ipywidgets.VBox([form, estimate])"
    )


STALE_CELL = (
    "stale = copy.deepcopy(client.models.get('lumen-4k').raw)\n"
    "stale['modes'][0]['price']['table'] = {'1K': 1, '2K': 2, '4K': 4}  # prices since raised\n"
    "old_form = RequestForm(stale)\n"
    "old_estimate = LiveEstimate(client, old_form, debounce=0)\n"
    "ipywidgets.VBox([old_form, old_estimate])"
)


def test_a_changed_field_shows_its_provisional_price_then_the_services(lab, tmp_path):
    seen = len(lab.console)
    notebook = lab.open("provisional.ipynb", [form_cell(tmp_path / "cache"), STALE_CELL])
    notebook.run_all()
    view = notebook.output(0)
    figures = view.locator(".mg-estimate-figures")
    expect(figures).to_contain_text("Billed duration5 s", timeout=30_000)
    # the service's first figure (the class exactly: neither stale nor provisional)
    expect(figures).to_have_class("mg-estimate-figures", timeout=DEBOUNCE_S * 1000 + 30_000)
    expect(figures).to_contain_text("List price30 credits")

    view.get_by_role("combobox", name="Duration seconds", exact=True).select_option(label="10")
    # at once: the local price, marked provisional, before the service is asked
    expect(figures).to_have_class("mg-estimate-figures mg-stale mg-provisional", timeout=2_000)
    expect(figures).to_contain_text("List price≈ 60 credits")
    expect(figures).to_contain_text("Billed duration10 s")
    expect(view.locator(".mg-estimate-figures.mg-provisional .mg-estimate-price")).to_be_visible()
    expect(view.locator(".mg-estimate")).to_contain_text("Provisional")
    # then the service's estimate replaces it: the same price, no difference to tell
    expect(figures).to_have_class("mg-estimate-figures", timeout=DEBOUNCE_S * 1000 + 30_000)
    expect(figures).to_contain_text("List price60 credits")
    expect(figures).to_contain_text("After discount60 credits")
    expect(view.locator(".mg-estimate-diff")).to_have_count(0)

    old = notebook.output(1)
    old_figures = old.locator(".mg-estimate-figures")
    expect(old_figures).to_have_class("mg-estimate-figures", timeout=30_000)
    expect(old_figures).to_contain_text("List price2 credits")  # the service's price wins
    expect(old.locator(".mg-estimate-diff")).to_have_text(
        "1 credits from the catalog; the service's 2 credits apply (+1)"
    )
    assert_clean(notebook)
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"


# the kernel answers each edit of the form 4 s late (a far kernel, or one whose comm messages
# wait behind a running cell: JupyterLab 4.6 sends them to a subshell, older hosts do not), and
# a view's request to price again (sent when it appears) as late: its answer, prices of the
# request before the user's pick, comes while the page waits for the kernel's answer to the pick
SLOW_KERNEL = (
    "import time\n"
    "def late(changes, _edit=form.edit):\n"
    "    time.sleep(4)\n"
    "    _edit(changes)\n"
    "form.edit = late\n"
    "def late_refresh(_refresh=estimate.refresh):\n"
    "    time.sleep(4)\n"
    "    return _refresh()\n"
    "estimate.refresh = late_refresh\n"
)

# every text the figures show from now on, in order
RECORD_FIGURES = """el => {
  el.mgShown = [];
  new MutationObserver(() => el.mgShown.push(el.textContent)).observe(
    el, { childList: true, subtree: true, characterData: true });
}"""


def test_a_picked_choice_is_priced_before_a_slow_kernel_answers(lab, tmp_path):
    """The kernel priced each choice ahead, so the page shows a picked one's price at once,
    however late the kernel answers, and until it answers that very pick (prices it sends for
    the request before it do not replace it). A second pick before the kernel caught up has no
    price the page can know: the figures go stale, and the kernel's answers follow."""
    seen = len(lab.console)
    built, shown = form_cell(tmp_path / "cache", debounce=0).rsplit("\n", 1)
    notebook = lab.open("slow-kernel.ipynb", [f"{built}\n{SLOW_KERNEL}{shown}"])
    notebook.run_all()
    view = notebook.output(0)
    figures = view.locator(".mg-estimate-figures")
    expect(figures).to_have_class("mg-estimate-figures", timeout=30_000)
    expect(figures).to_contain_text("List price30 credits")
    duration = view.get_by_role("combobox", name="Duration seconds", exact=True)
    tier = view.get_by_role("combobox", name="Tier", exact=True)

    figures.evaluate(RECORD_FIGURES)
    duration.select_option(label="10")
    expect(figures).to_have_class("mg-estimate-figures mg-stale mg-provisional", timeout=1_000)
    expect(figures).to_contain_text("List price≈ 60 credits")
    expect(figures).to_contain_text("Billed duration10 s")
    # the kernel, 4 s after the view's refresh and 4 s more, confirms it
    expect(figures).to_have_class("mg-estimate-figures", timeout=30_000)
    expect(figures).to_contain_text("List price60 credits")
    # meanwhile the refresh's prices of the 5 s request came, and never replaced the pick's
    shown_texts = figures.evaluate("el => el.mgShown")
    assert shown_texts, "the figures never changed"
    assert not [text for text in shown_texts if "30 credits" in text], shown_texts

    duration.select_option(label="5")
    expect(figures).to_contain_text("List price≈ 30 credits", timeout=1_000)
    tier.select_option(label="1080p")  # priced for 720p: the page cannot know this one
    expect(figures).to_have_class("mg-estimate-figures mg-stale", timeout=1_000)
    expect(figures).not_to_contain_text("≈")
    # both answered: the service's price of 1080p for 5 s, dearer than 720p's
    expect(figures).to_have_class("mg-estimate-figures", timeout=30_000)
    expect(figures).to_contain_text("Billed duration5 s")
    expect(view.locator(".mg-estimate-figures .mg-estimate-price")).not_to_have_text("30 credits")
    assert_clean(notebook)
    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"

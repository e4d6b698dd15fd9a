"""Content credentials in real JupyterLab and Chromium: the studio's output card says who
signed the output and which model made it, and the gallery's card carries the "CR" badge that
says the same; an output saved with no signer says its record is unsigned."""

from __future__ import annotations

from playwright.sync_api import expect
from test_studio import JOB_TIMEOUT, pick, studio_cell, submit_when_priced


def signer_cell(pki) -> str:
    """The kernel signs what it saves with the test CA's leaf and trusts the test root."""
    return (
        "import os\n"
        "from mediagen import provenance\n"
        f"provenance.configure(certificate_chain={str(pki['chain.pem'])!r},"
        f" key={str(pki['leaf.key'])!r})\n"
        f"os.environ['MEDIAGEN_C2PA_TRUST_ANCHORS'] = {str(pki['root.pem'])!r}\n"
        "print('signing')"
    )


def make_one(studio, prompt: str):
    """Submit ``prompt`` to pixel-1 from the studio; the new card, once its image shows."""
    before = studio.locator(".mg-job").count()
    prompt_box = studio.locator(".mg-form").get_by_role("textbox", name="Prompt", exact=True)
    prompt_box.fill(prompt)
    studio.page.wait_for_timeout(500)  # the form debounces typing before telling the kernel
    submit_when_priced(studio)
    expect(studio.locator(".mg-job")).to_have_count(before + 1, timeout=JOB_TIMEOUT)
    card = studio.locator(".mg-job").first  # newest first
    expect(card).to_have_attribute("data-status", "completed", timeout=JOB_TIMEOUT)
    card.locator("img").wait_for(timeout=JOB_TIMEOUT)
    return card


def test_the_card_and_the_gallery_say_who_signed_an_output_and_what_made_it(lab, tmp_path, pki):
    seen = len(lab.console)
    notebook = lab.open("credentials.ipynb", [signer_cell(pki), studio_cell(tmp_path / "cache")])
    notebook.run_all()
    notebook.wait_cell_done(1, timeout=JOB_TIMEOUT)
    studio = notebook.output(1)
    studio.locator(".mg-picker [role=option]").first.wait_for(timeout=JOB_TIMEOUT)
    pick(studio, "Image", "pixel-1")

    card = make_one(studio, "a signed lighthouse")
    signed = "Content credentials: signed by mediagen test signer · made by pixel-1 · valid"
    line = card.locator(".mg-job-credentials")
    expect(line).to_have_text(signed, timeout=JOB_TIMEOUT)
    expect(line).to_have_attribute("data-status", "valid")
    generation_id = card.locator("code").first.inner_text()

    gallery_card = studio.locator(f'.mg-gallery-card[data-id="{generation_id}"]')
    badge = gallery_card.get_by_role("img", name=signed)
    expect(badge).to_be_visible(timeout=JOB_TIMEOUT)
    expect(badge).to_have_text("CR")
    expect(badge).to_have_attribute("title", signed)
    expect(badge).to_have_class("mg-badge mg-badge--ok mg-gallery-credentials")

    # the signer is taken away: the next output is recorded beside the file, unsigned
    index = notebook.append_cell("provenance.configure(); print('unsigned from here')")
    notebook.run_cell(index)
    notebook.wait_cell_done(index)
    card = make_one(studio, "an unsigned lighthouse")
    expect(card.locator(".mg-job-credentials")).to_have_text(
        "Content credentials: made by pixel-1 · unsigned, recorded beside the file",
        timeout=JOB_TIMEOUT,
    )
    unsigned_id = card.locator("code").first.inner_text()
    expect(
        studio.locator(f'.mg-gallery-card[data-id="{unsigned_id}"] .mg-gallery-credentials')
    ).to_have_attribute("data-status", "unsigned", timeout=JOB_TIMEOUT)

    errors = [line for line in lab.console[seen:] if line.startswith("error")]
    assert errors == [], f"browser console errors: {errors}"

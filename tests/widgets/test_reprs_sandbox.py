"""Rich reprs without widgets: real client objects from the sandbox, through nbconvert's HTML."""

from __future__ import annotations

import base64
import re

import nbformat
from nbconvert import HTMLExporter


def test_generation_estimate_and_credits_show_as_html_with_media_in_nbconvert(make_client, tenant):
    client = make_client(tenant)
    image = client.images.create(model="pixel-1", prompt="a lighthouse").wait()
    speech = client.audio.create(model="voxa-tts", text="Hello", voice_name="Aria").wait()
    video = client.videos.create(model="wave-1", prompt="waves", num_frames=40).wait()
    failed = client.images.create(model="pixel-1", prompt="x [[fail:timeout]]").wait()
    estimate = client.models.estimate_request({"model": "pixel-1", "prompt": "a lighthouse"})
    credits = client.credits.get()

    cells = []
    for obj in (image, speech, video, failed, estimate, credits, video.outputs[0]):
        bundle = (
            obj._repr_mimebundle_()
            if hasattr(obj, "_repr_mimebundle_")
            else {"text/plain": repr(obj), "text/html": obj._repr_html_()}
        )
        output = nbformat.v4.new_output("display_data", data=bundle)
        cells.append(nbformat.v4.new_code_cell("obj", outputs=[output]))
    notebook = nbformat.v4.new_notebook(cells=cells)
    page, _ = HTMLExporter().from_notebook_node(notebook)

    assert re.search(r'<img[^>]*src="data:image/(jpeg|png);base64,', page)
    assert re.search(r'<audio[^>]*controls[^>]*src="data:audio/', page)
    assert len(re.findall(r'<video[^>]*controls[^>]*src="data:video/mp4;base64,', page)) == 2
    clip = video.outputs[0].local_path.read_bytes()
    assert base64.b64encode(clip[:300]).decode()[:200] in page  # the cached bytes, inline
    assert "completed" in page
    assert "<code>timeout</code>" in page
    assert f"{image.credits_charged:g} credits" in page
    assert "can be submitted" in page
    assert f"{credits.balance:,.2f}".rstrip("0").rstrip(".") in page
    assert client.base_url not in page, "no temporary service URL in the saved output"
    assert tenant.api_key not in page

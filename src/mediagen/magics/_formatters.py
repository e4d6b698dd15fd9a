"""HTML for the client's models that have no ``_repr_html_`` of their own.

The extension registers these as IPython display formatters while it is loaded, so a
Generation, an output, an estimate or a catalog entry shows inline in a notebook.
"""

from __future__ import annotations

import html
from typing import Any

from mediagen.magics._display import CreditsView, EstimateView, credits_text, table_html
from mediagen.wire._fields import read_field


def _media_tag(output: Any) -> str:
    url = read_field(output, "url")
    content_type = str(read_field(output, "content_type") or "")
    local = read_field(output, "local_path") or read_field(output, "path")
    src = html.escape(str(local or url or ""))
    if not src:
        return ""
    if content_type.startswith("image/"):
        return f'<img src="{src}" alt="generated image" style="max-width: 320px">'
    if content_type.startswith("video/"):
        return f'<video src="{src}" controls style="max-width: 320px"></video>'
    if content_type.startswith("audio/"):
        return f'<audio src="{src}" controls></audio>'
    return f'<a href="{src}">{html.escape(content_type or "output")}</a>'


def generation_html(generation: Any) -> str:
    """A Generation as HTML: status, model, cost, error, and its outputs inline."""
    status = str(read_field(generation, "status"))
    rows = [
        ("id", str(read_field(generation, "id"))),
        ("status", status),
        ("model", f"{read_field(generation, 'model')} ({read_field(generation, 'type')})"),
    ]
    charged = read_field(generation, "credits_charged")
    if charged is not None:
        rows.append(("charged", f"{credits_text(charged)} credits"))
    error = read_field(generation, "error")
    if error:
        rows.append(("error", f"{read_field(error, 'code')}: {read_field(error, 'message')}"))
    media = "".join(_media_tag(o) for o in read_field(generation, "outputs") or ())
    return table_html("Generation", rows) + (f"<div>{media}</div>" if media else "")


def output_html(output: Any) -> str:
    return _media_tag(output) or html.escape(repr(output))


def estimate_html(estimate: Any) -> str:
    return EstimateView({"model": read_field(estimate, "model")}, estimate)._repr_html_()


def credits_html(credits: Any) -> str:
    return CreditsView(credits)._repr_html_()


def model_html(entry: Any) -> str:
    rows = [
        ("id", str(read_field(entry, "id"))),
        ("type", str(read_field(entry, "type"))),
        ("modes", ", ".join(str(read_field(m, "id")) for m in read_field(entry, "modes") or ())),
        ("price", str(read_field(entry, "price_summary") or "")),
    ]
    return table_html(str(read_field(entry, "name") or read_field(entry, "id")), rows)


#: client model class name -> fallback HTML renderer
FALLBACK_RENDERERS = {
    "Generation": generation_html,
    "GenerationOutput": output_html,
    "Estimate": estimate_html,
    "Credits": credits_html,
    "ModelEntry": model_html,
    "Model": model_html,
}

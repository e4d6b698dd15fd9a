"""Rich HTML for client objects, without widgets: it shows in JupyterLab, nbconvert and GitHub.

Media are embedded as data URIs read from the output's *local cached copy*, so they keep showing
after the service's temporary URL expires and in a notebook opened without a kernel. Images are
shrunk to a thumbnail when Pillow is present; video and audio are embedded up to a size cap and
otherwise named with their local path. Only inline styles (a saved notebook carries no
stylesheet), with JupyterLab's CSS variables and fallbacks. No pandas, ipywidgets or IPython.
"""

from __future__ import annotations

import base64
import functools
import html
import io
import mimetypes
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

THUMBNAIL_PX = 384
MAX_EMBED_BYTES = 4 * 1024 * 1024

_FONT = (
    "font-family: var(--jp-ui-font-family, system-ui, sans-serif);"
    " font-size: var(--jp-ui-font-size1, 13px); color: var(--jp-ui-font-color1, inherit)"
)
_BOX = (
    f"{_FONT}; border: 1px solid var(--jp-border-color2, #e0e0e0); border-radius: 4px;"
    " padding: 6px 10px; margin: 2px 0; display: inline-block; max-width: 100%"
)
_MUTED = "color: var(--jp-ui-font-color2, #616161)"
MUTED = _MUTED
_STATUS_COLORS = {
    "completed": "var(--jp-success-color1, #388e3c)",
    "failed": "var(--jp-error-color1, #d32f2f)",
    "pending": "var(--jp-warn-color1, #f57c00)",
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """A field of a client model or of its JSON dict (the API is additive: tolerate both)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


escape = _esc


def plural(count: int, word: str) -> str:
    """``1 generation``, ``2 generations``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def credits_text(value: Any) -> str:
    """Credits as the service states them (``36``, ``36.5``, ``12.34``): never re-rounded."""
    if value is None:
        return "–"
    number = float(value)
    return f"{int(number):,}" if number.is_integer() else f"{number:,.2f}".rstrip("0")


def _table(rows: Iterable[tuple[str, str]]) -> str:
    """Rows of (label, already-escaped HTML)."""
    cells = "".join(
        f'<tr><th style="text-align:left; padding:1px 10px 1px 0; font-weight:600; {_MUTED}">'
        f"{_esc(label)}</th><td style='text-align:left; padding:1px 0'>{value}</td></tr>"
        for label, value in rows
    )
    return f'<table style="border-collapse:collapse; margin:2px 0">{cells}</table>'


def box(title: str, body: str, *, kind: str) -> str:
    return (
        f'<div class="mediagen-{kind}" style="{_BOX}">'
        f'<div style="font-weight:600; margin-bottom:4px">{title}</div>{body}</div>'
    )


def _badge(status: str) -> str:
    color = _STATUS_COLORS.get(status, "var(--jp-ui-font-color2, #616161)")
    return (
        f'<span style="color:{color}; border:1px solid {color}; border-radius:10px;'
        f' padding:0 6px; font-size: var(--jp-ui-font-size0, 11px)">{_esc(status)}</span>'
    )


# --- media -------------------------------------------------------------------------------


def _local_path(output: Any) -> Path | None:
    """The output's local copy if it has one (reprs never download: they must be instant)."""
    for name in ("local_path", "cached_path", "path"):
        value = _get(output, name)
        if callable(value):
            try:
                value = value()
            except Exception:
                value = None
        if value and Path(value).is_file():
            return Path(value)
    return None


def _thumbnail(path: Path, content_type: str, size: int = THUMBNAIL_PX) -> tuple[bytes, str]:
    """Image bytes no wider or taller than ``size`` (the original when Pillow is absent).

    Kept per file version: a widget's snapshot is drawn again as the widget changes, and its
    thumbnails are the same files each time."""
    stat = path.stat()
    return _thumbnail_of(path, stat.st_mtime_ns, stat.st_size, content_type, size)


@functools.lru_cache(maxsize=256)
def _thumbnail_of(
    path: Path, _mtime_ns: int, _bytes: int, content_type: str, size: int
) -> tuple[bytes, str]:
    try:
        from PIL import Image
    except ImportError:
        return path.read_bytes(), content_type
    with Image.open(path) as image:
        if max(image.size) <= size:
            return path.read_bytes(), content_type
        image.thumbnail((size, size))
        keep_alpha = image.mode in ("RGBA", "LA", "P")
        buffer = io.BytesIO()
        if keep_alpha:
            image.save(buffer, format="PNG", optimize=True)
            return buffer.getvalue(), "image/png"
        image.convert("RGB").save(buffer, format="JPEG", quality=82)
        return buffer.getvalue(), "image/jpeg"


def _data_uri(data: bytes, content_type: str) -> str:
    return f"data:{content_type};base64,{base64.b64encode(data).decode()}"


def media_html(
    output: Any,
    *,
    width_px: int = 320,
    max_embed_bytes: int = MAX_EMBED_BYTES,
    name_path: bool = True,
) -> str:
    """An ``<img>``, ``<video controls>`` or ``<audio controls>`` from the output's local copy.

    A video or audio file over ``max_embed_bytes`` is not embedded: it is named with its size,
    and with where it is saved only if ``name_path`` (a report shared with others must not
    point into this machine)."""
    path = _local_path(output)
    content_type = str(_get(output, "content_type") or "")
    if not content_type and path is not None:
        content_type = mimetypes.guess_type(path.name)[0] or ""
    label = _esc(_get(output, "filename") or (path.name if path else "output"))
    if path is None:
        return (
            f'<div style="{_MUTED}">{label}: no local copy yet'
            " (call <code>.save()</code> to keep it)</div>"
        )
    style = f"max-width:{width_px}px; width:100%; display:block; border-radius:4px"
    if content_type.startswith("image/"):
        data, thumb_type = _thumbnail(path, content_type)
        return f'<img src="{_data_uri(data, thumb_type)}" alt="{label}" style="{style}">'
    size = path.stat().st_size
    if size > max_embed_bytes:
        where = f", saved at {_esc(path)}" if name_path else ", too large to include here"
        kind = content_type.split("/")[0] or "file"
        return (
            f'<div class="mg-media-omitted" style="{_MUTED}">{label} ({kind}): {size:,} bytes'
            f"{where}</div>"
        )
    src = _data_uri(path.read_bytes(), content_type)
    if content_type.startswith("video/"):
        return f'<video controls src="{src}" aria-label="Video: {label}" style="{style}"></video>'
    if content_type.startswith("audio/"):
        return f'<audio controls src="{src}" aria-label="Audio: {label}"></audio>'
    return f'<div style="{_MUTED}">{label} ({_esc(content_type or "file")})</div>'


def thumbnail_html(output: Any, *, thumbnail_px: int) -> str:
    """A small image, or for video and audio a labelled box (a snapshot stays small)."""
    path = _local_path(output)
    content_type = str(_get(output, "content_type") or "")
    facts = _output_facts(output)
    if path is not None and content_type.startswith("image/"):
        data, thumb_type = _thumbnail(path, content_type, thumbnail_px)
        return (
            f'<img src="{_data_uri(data, thumb_type)}" alt="{facts}"'
            ' style="width:100%; display:block; border-radius:4px">'
        )
    kind = content_type.split("/")[0] or "file"
    return (
        f'<div style="{_MUTED}; border:1px dashed var(--jp-border-color2, #e0e0e0);'
        f' border-radius:4px; padding:14px 4px; text-align:center">{_esc(kind)} · {facts}</div>'
    )


def settings_text(settings: Mapping[str, Any] | None) -> str:
    """The request settings that set a price, as ``quality high · size 1024x1024 · 5 s``."""
    parts = []
    for name, value in (settings or {}).items():
        if value in (None, "", [], {}):
            continue
        if name == "duration_seconds":
            parts.append(f"{credits_text(value)} s")
        else:
            parts.append(f"{name.replace('_', ' ')} {value}")
    return " · ".join(parts)


def compact_generation_html(
    gen: Any, settings: Mapping[str, Any] | None = None, *, thumbnail_px: int = 160
) -> str:
    """A small card: first output's thumbnail, status, model, settings, credits, prompt, id."""
    status = str(_get(gen, "status") or "")
    outputs = list(_get(gen, "outputs") or ())
    media = thumbnail_html(outputs[0], thumbnail_px=thumbnail_px) if outputs else ""
    if len(outputs) > 1:
        media += f"<div style='{_MUTED}'>+{len(outputs) - 1} more</div>"
    charged = _get(gen, "credits_charged")
    line = f"{_badge(status)} <b>{_esc(_get(gen, 'model'))}</b>"
    if charged is not None:
        line += f" {credits_text(charged)} cr"
    error = _get(gen, "error")
    extra = ""
    if error:
        extra += f"<div style='color:{_STATUS_COLORS['failed']}'>{_esc(_get(error, 'code'))}</div>"
    shown = settings_text(settings)
    if shown:
        extra += f"<div style='{_MUTED}'>{_esc(shown)}</div>"
    prompt = str(_get(gen, "prompt") or "")
    prompt = prompt if len(prompt) <= 90 else prompt[:89] + "…"
    return (
        f'<div class="mediagen-card" style="{_FONT}; border:1px solid'
        ' var(--jp-border-color2, #e0e0e0); border-radius:4px; padding:4px">'
        f"{media}<div>{line}</div>{extra}<div style='{_MUTED}'>{_esc(prompt)}</div>"
        f"<code style='font-size: var(--jp-ui-font-size0, 11px)'>{_esc(_get(gen, 'id'))}</code>"
        "</div>"
    )


def _output_facts(output: Any) -> str:
    parts = []
    width, height = _get(output, "width"), _get(output, "height")
    if width and height:
        parts.append(f"{width}×{height}")
    duration = _get(output, "duration_seconds")
    if duration:
        parts.append(f"{credits_text(duration)} s")
    if _get(output, "content_type"):
        parts.append(str(_get(output, "content_type")))
    return _esc(" · ".join(parts))


# --- public ------------------------------------------------------------------------------


def output_html(output: Any) -> str:
    """One output: the media inline, with its size, duration and asset id."""
    facts = _output_facts(output)
    asset = _get(output, "asset_id")
    caption = facts + (f" · <code>{_esc(asset)}</code>" if asset else "")
    return (
        f'<figure class="mediagen-output" style="{_FONT}; margin:2px 0">{media_html(output)}'
        f'<figcaption style="{_MUTED}; font-size: var(--jp-ui-font-size0, 11px)">'
        f"{caption}</figcaption></figure>"
    )


def generation_html(gen: Any) -> str:
    """A generation: status, model, prompt, credits, error, and every output inline."""
    status = str(_get(gen, "status") or "")
    rows = [
        ("status", _badge(status)),
        (
            "model",
            f"{_esc(_get(gen, 'model'))} <span style='{_MUTED}'>({_esc(_get(gen, 'type'))})</span>",
        ),
    ]
    if _get(gen, "mode"):
        rows.append(("mode", _esc(_get(gen, "mode"))))
    prompt = _get(gen, "prompt")
    if prompt:
        shown = prompt if len(prompt) <= 200 else prompt[:199] + "…"
        rows.append(("prompt", _esc(shown)))
    charged = _get(gen, "credits_charged")
    if charged is not None:
        rows.append(("charged", f"{credits_text(charged)} credits"))
    elif status == "pending":
        rows.append(("charged", f"<span style='{_MUTED}'>not yet (pending)</span>"))
    error = _get(gen, "error")
    if error:
        rows.append(
            ("error", f"<code>{_esc(_get(error, 'code'))}</code> {_esc(_get(error, 'message'))}")
        )
    rows.append(("id", f"<code>{_esc(_get(gen, 'id'))}</code>"))
    outputs = list(_get(gen, "outputs") or ())
    media = ""
    if outputs:
        cells = "".join(output_html(o) for o in outputs)
        media = (
            '<div style="display:grid; gap:8px;'
            f' grid-template-columns: repeat(auto-fill, minmax(200px, 320px))">{cells}</div>'
        )
    return box("Generation", _table(rows) + media, kind="generation")


def estimate_html(est: Any) -> str:
    """An estimate: list price, discount, price after discount, balance, and whether it can go."""
    credits = _get(est, "credits")
    after = _get(est, "credits_after_discount")
    discount = _get(est, "discount_percent") or 0
    rows = [("model", _esc(_get(est, "model")))]
    rows.append(("list price", f"{credits_text(credits)} credits"))
    if discount:
        rows.append(("discount", f"{credits_text(discount)} %"))
    rows.append(("you pay", f"<b>{credits_text(after)} credits</b>"))
    billable = _get(est, "billable_duration_seconds")
    if billable is not None:
        rows.append(("billed duration", f"{credits_text(billable)} s"))
    rows.append(("balance", f"{credits_text(_get(est, 'balance'))} credits"))
    allowed = _get(est, "allowed", True)
    affordable = _get(est, "can_afford", True)
    if allowed and affordable:
        verdict = _badge_text("can be submitted", "completed")
    else:
        why = _get(est, "reason") or ("not allowed" if not allowed else "balance too low")
        verdict = _badge_text(f"cannot be submitted: {why}", "failed")
    rows.append(("", verdict))
    return box("Estimate", _table(rows), kind="estimate")


def _badge_text(text: str, status: str) -> str:
    color = _STATUS_COLORS[status]
    return f'<span style="color:{color}">{_esc(text)}</span>'


def credits_html(credits: Any) -> str:
    """Credits: balance, reserved, plan and discount, and the member cap with its reset time."""
    rows = [("balance", f"<b>{credits_text(_get(credits, 'balance'))} credits</b>")]
    org = _get(credits, "organization_balance")
    if org is not None and org != _get(credits, "balance"):
        rows.append(("organization", f"{credits_text(org)} credits"))
    if _get(credits, "reserved"):
        rows.append(("reserved", f"{credits_text(_get(credits, 'reserved'))} credits"))
    if _get(credits, "plan"):
        rows.append(("plan", _esc(_get(credits, "plan"))))
    if _get(credits, "discount_percent"):
        rows.append(("discount", f"{credits_text(_get(credits, 'discount_percent'))} %"))
    cap = _get(credits, "member_limit")
    if cap:
        used, limit = _get(cap, "used"), _get(cap, "limit")
        resets = _get(cap, "resets_at")
        rows.append(
            (
                "member cap",
                f"{credits_text(used)} of {credits_text(limit)} used"
                + (
                    f" <span style='{_MUTED}'>(resets {_esc(_iso(resets))})</span>"
                    if resets
                    else ""
                ),
            )
        )
    return box("Credits", _table(rows), kind="credits")


def _iso(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)

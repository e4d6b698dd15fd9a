"""Running a ``%%mediagen`` cell: quote, consent, submit once, wait, bind.

The order is the promise: nothing is sent before the estimate is shown and, above the
threshold, agreed to; a submit carries one idempotency key, so repeating it after an interrupt
(``%mediagen attach --key``) is charged at most once; an interrupt while waiting stops the
waiting, never the generation.
"""

from __future__ import annotations

import os
from typing import Any

from IPython.core.error import StdinNotImplementedError
from IPython.display import display

from mediagen.display._progress import (
    Progress,
    format_seconds,
    generation_callback,
    generation_message,
)
from mediagen.magics import _service as mc
from mediagen.magics import _settings as settings
from mediagen.magics._cell_line import MagicUsageError, parse_cell_line
from mediagen.magics._display import EstimateView, Notice, credits_text
from mediagen.magics._request import build_request, choose_model, prompt_field
from mediagen.magics._session import MagicSession
from mediagen.wire._fields import read_field


def run_cell(magics: MagicSession, line: str, cell: str) -> Any:
    """The cell magic: the line names the kind and fields, the body is the prompt."""
    options = parse_cell_line(line)
    client = magics.client
    entries = mc.list_models(client, options.kind)
    default = magics.default_models.get(options.kind)
    entry = choose_model(options.kind, entries, options.model, default)

    def resolve_asset(name: str, value: Any, media: Any) -> str:
        return _resolve_asset(magics, name, value)

    request = build_request(entry, options, cell, resolve_asset=resolve_asset, lookup=magics.lookup)
    estimate = mc.estimate(client, request)
    display(EstimateView(request, estimate, prompt_field(entry)))
    refusal = _refusal(estimate)
    if refusal:
        display(Notice(f"Not submitted: {refusal}.", "error"))
        return None
    note = mc.forecast_note(client, request)
    if note:
        display(Notice(note, "info"))
    price = read_field(estimate, "credits_after_discount")
    needs_consent = price is not None and float(price) > magics.threshold()
    if needs_consent and not options.yes and not _confirm(magics, price):
        display(Notice("Not submitted; nothing was spent.", "info"))
        return None
    generation = submit(magics, options.kind, request, options.output_name)
    if generation is None:
        return None
    magics.bind(options.output_name, generation)
    if not options.wait:
        gen_id = read_field(generation, "id")
        target = f" -o {options.output_name}" if options.output_name else ""
        display(
            Notice(
                f"Submitted generation {gen_id} (pending). "
                f"Wait for it with: %mediagen attach {gen_id}{target}",
                "info",
            )
        )
        return None
    return wait_and_show(magics, generation, options.output_name)


def _refusal(estimate: Any) -> str | None:
    """Why the service would refuse this request (said before anything is sent), or None."""
    if read_field(estimate, "allowed") is False:
        return "this model is not available on your plan"
    if read_field(estimate, "can_afford") is False:
        return "the balance does not cover this estimate"
    return None


def _resolve_asset(magics: MagicSession, name: str, value: Any) -> str:
    """An asset id from an id, a variable (generation, output, asset) or a local file."""
    if isinstance(value, str):
        found, obj = magics.lookup(value)
        if found:
            return _resolve_asset(magics, name, obj)
        if value.startswith("asset_"):
            return value
        path = os.path.expanduser(value)
        if os.path.isfile(path):
            with Progress(f"Uploading {os.path.basename(path)}", unit="file") as bar:
                asset_id = mc.upload(magics.client, path)
                bar.update(1, message=asset_id)
            return asset_id
        raise MagicUsageError(
            f"--{name}: {value!r} is not an asset id, a file, or a variable holding a "
            "generation or an output"
        )
    if read_field(value, "outputs") is not None:  # a Generation: its first output
        if read_field(value, "status") != "completed" or not read_field(value, "outputs"):
            raise MagicUsageError(
                f"--{name}: generation {read_field(value, 'id')} is "
                f"{read_field(value, 'status')}; only a completed one has outputs to use"
            )
        value = read_field(value, "outputs")[0]
    asset_id = read_field(value, "asset_id")
    if not asset_id:
        raise MagicUsageError(f"--{name}: {type(value).__name__} has no asset_id")
    return str(asset_id)


def _confirm(magics: MagicSession, price: Any) -> bool:
    question = (
        f"This will spend {credits_text(price)} credits (more than "
        f"{credits_text(magics.threshold())}). Submit? [y/N] "
    )
    cannot_ask = Notice(
        "Cannot ask for confirmation here (no input); add --yes to the magic line "
        "to spend without asking.",
        "warn",
    )
    if not magics.ask:
        display(cannot_ask)
        return False
    try:
        answer = input(question)
    except (StdinNotImplementedError, EOFError, OSError):
        display(cannot_ask)
        return False
    return answer.strip().lower() in ("y", "yes")


def submit(magics: MagicSession, kind: str, request: dict[str, Any], name: str | None) -> Any:
    """Submit with a fresh idempotency key, kept until the service answers."""
    key = mc.new_idempotency_key()
    magics.unconfirmed[key] = (kind, request)
    try:
        generation = mc.submit(magics.client, kind, request, key)
    except KeyboardInterrupt:
        target = f" -o {name}" if name else ""
        display(
            Notice(
                "Interrupted while submitting: the request may have reached the service. "
                f"Run `%mediagen attach --key {key}{target}` to find out; it repeats the "
                "submit with the same idempotency key, so it is charged at most once.",
                "warn",
            )
        )
        return None
    magics.unconfirmed.pop(key, None)
    return generation


def resubmit(magics: MagicSession, key: str) -> Any:
    """Repeat an interrupted submit with its own key: the service answers with the one job."""
    if key not in magics.unconfirmed:
        raise MagicUsageError(
            f"no interrupted submit with key {key!r} in this session; "
            "see `%mediagen pending` for generations still running"
        )
    kind, request = magics.unconfirmed[key]
    generation = mc.submit(magics.client, kind, request, key)
    magics.unconfirmed.pop(key, None)
    return generation


def wait_and_show(magics: MagicSession, generation: Any, name: str | None) -> Any:
    """Wait in the foreground with live progress; an interrupt leaves the job running."""
    latest = [generation]
    model = read_field(generation, "model")
    expected = mc.expected_seconds(magics.client, generation)
    bar = Progress(f"Generation {model}", expected=expected)
    show_progress = generation_callback(bar)

    def on_poll(polled: Any, *args: Any, **kwargs: Any) -> None:
        latest[0] = polled
        show_progress(polled)

    try:
        final = mc.wait(
            magics.client,
            generation,
            on_poll=on_poll,
            timeout=settings.wait_timeout,
            poll_interval=settings.wait_poll_interval,
        )
    except KeyboardInterrupt:
        current = latest[0]
        bar.close(f"stopped waiting after {format_seconds(bar.elapsed)}", ok=False)
        magics.bind(name, current)
        display(Notice(_interrupted_text(current, name), "warn"))
        return None
    except BaseException:
        bar.close(f"stopped after {format_seconds(bar.elapsed)}", ok=False)
        raise
    bar.close(
        f"{generation_message(final)} in {format_seconds(bar.elapsed)}",
        ok=read_field(final, "status") == "completed",
    )
    magics.bind(name, final)
    if read_field(final, "status") == "failed":
        display(Notice(_failed_text(final), "error"))
    return show(final, name)


def show(generation: Any, name: str | None) -> Any:
    """Bound to a name: displayed (the cell's value stays quiet); else the cell's value."""
    if name:
        display(generation)
        return None
    return generation


def _failed_text(generation: Any) -> str:
    error = read_field(generation, "error")
    return (
        f"Generation {read_field(generation, 'id')} failed: {read_field(error, 'code')}: "
        f"{read_field(error, 'message')}. Nothing was charged (the reservation was returned)."
    )


def _interrupted_text(generation: Any, name: str | None) -> str:
    gen_id = read_field(generation, "id")
    status = read_field(generation, "status")
    bound = f" {name} holds it as last seen ({status})." if name else ""
    target = f" -o {name}" if name else ""
    return (
        f"Stopped waiting. Generation {gen_id} keeps running on the service and was not "
        f"resubmitted; it is charged only if it completes.{bound} "
        f"Re-attach with: %mediagen attach {gen_id}{target}"
    )

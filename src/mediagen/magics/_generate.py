"""Running a ``%%mediagen`` cell: quote, consent, submit once, wait, bind.

The order is the promise: nothing is sent before the estimate is shown and, above the
threshold, agreed to; a submit carries one idempotency key, so repeating it after an interrupt
(``%mediagen attach --key``) is charged at most once; an interrupt while waiting stops the
waiting, never the generation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from IPython.core.error import StdinNotImplementedError
from IPython.display import display

from mediagen.client import (
    Asset,
    Client,
    Estimate,
    Generation,
    MediagenError,
    SubmitInterrupted,
    UploadTicket,
    _models,
)
from mediagen.display._progress import (
    Progress,
    format_seconds,
    generation_callback,
    generation_message,
)
from mediagen.magics import _settings as settings
from mediagen.magics._cell_line import MagicUsageError, parse_cell_line
from mediagen.magics._display import EstimateView, Notice, credits_text
from mediagen.magics._request import build_request, choose_model, prompt_field
from mediagen.magics._session import MagicSession


def run_cell(magics: MagicSession, line: str, cell: str) -> Any:
    """The cell magic: the line names the kind and fields, the body is the prompt."""
    options = parse_cell_line(line)
    client = magics.client
    entries = list_models(client, options.kind)
    default = magics.default_models.get(options.kind)
    entry = choose_model(options.kind, entries, options.model, default)

    def resolve_asset(name: str, value: Any, media: Any) -> str:
        return _resolve_asset(magics, name, value)

    request = build_request(entry, options, cell, resolve_asset=resolve_asset, lookup=magics.lookup)
    estimate = client.models.estimate_request(request)
    display(EstimateView(request, estimate, prompt_field(entry)))
    refusal = _refusal(estimate)
    if refusal:
        display(Notice(f"Not submitted: {refusal}.", "error"))
        return None
    note = _forecast_note(client, request)
    if note:
        display(Notice(note, "info"))
    price = estimate.credits_after_discount
    needs_consent = price is not None and price > magics.threshold()
    if needs_consent and not options.yes and not _confirm(magics, price):
        display(Notice("Not submitted; nothing was spent.", "info"))
        return None
    generation = submit(magics, options.kind, request, options.output_name)
    if generation is None:
        return None
    magics.bind(options.output_name, generation)
    if not options.wait:
        gen_id = generation.id
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


def list_models(client: Client, kind: str | None = None) -> list[dict[str, Any]]:
    """Catalog entries of ``kind`` (or all), as the service's JSON: the request is built and
    checked from the catalog's own words."""
    models = client.models.list(type=kind) if kind else client.models.list()
    return [m.to_dict() for m in models if kind is None or m.type == kind]


def _forecast_note(client: Client, request: Mapping[str, Any]) -> str | None:
    """How long this request will likely take and how often it fails, from the user's own
    history (``mediagen.history``); None when the store cannot be read (the purchase goes on)."""
    from mediagen import history

    try:
        return history.request_note(client, request)
    except (MediagenError, OSError):
        return None


def expected_seconds(client: Client, generation: Generation) -> float | None:
    """How long this generation's model usually takes for this user (``mediagen.history``)."""
    from mediagen import history

    return history.expected_seconds(client, generation.model, generation.mode)


def _refusal(estimate: Estimate) -> str | None:
    """Why the service would refuse this request (said before anything is sent), or None."""
    if estimate.allowed is False:
        return "this model is not available on your plan"
    if estimate.can_afford is False:
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
                uploaded = magics.client.uploads.upload(path).asset_id
                bar.update(1, message=uploaded)
            return uploaded
        raise MagicUsageError(
            f"--{name}: {value!r} is not an asset id, a file, or a variable holding a "
            "generation or an output"
        )
    if isinstance(value, _models.Generation):  # its first output
        if value.status != "completed" or not value.outputs:
            raise MagicUsageError(
                f"--{name}: generation {value.id} is {value.status}; only a completed one has "
                "outputs to use"
            )
        value = value.outputs[0]
    asset_id: Any = None
    if isinstance(value, (_models.GenerationOutput, Asset, UploadTicket)):
        asset_id = value.asset_id
    elif isinstance(value, Mapping):  # an asset as the service's JSON
        asset_id = value.get("asset_id")
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


def submit(
    magics: MagicSession, kind: str, request: dict[str, Any], name: str | None
) -> Generation | None:
    """Submit through the client, which makes the idempotency key and journals the attempt:
    an interrupt before the answer leaves it recoverable by that key (``%mediagen attach
    --key``, after a kernel restart too), and running the same cell again reuses the key
    instead of charging twice."""
    try:
        return magics.client.resource(kind).create(**request)
    except SubmitInterrupted as interrupted:
        key = interrupted.idempotency_key
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


def resubmit(magics: MagicSession, key: str) -> Generation:
    """Repeat an interrupted submit with its own key: the service answers with the one job."""
    try:
        return magics.client.generations.resend(key)
    except LookupError as missing:
        raise MagicUsageError(f"{missing}; see `%mediagen pending`") from None


def wait_and_show(magics: MagicSession, generation: Generation, name: str | None) -> Any:
    """Wait in the foreground with live progress; an interrupt leaves the job running."""
    latest = [generation]
    expected = expected_seconds(magics.client, generation)
    bar = Progress(f"Generation {generation.model}", expected=expected)
    show_progress = generation_callback(bar)

    def on_poll(polled: Generation) -> None:
        latest[0] = polled
        show_progress(polled)

    try:
        final = magics.client.generations.wait(
            generation,
            timeout=settings.wait_timeout,
            on_update=on_poll,
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
    return _settled(magics, bar, final, name, bar.elapsed)


def show_settled(magics: MagicSession, generation: Generation, name: str | None) -> Any:
    """A generation found finished (``%mediagen attach`` after it ended): what a wait for it
    ends with, the summary, a failure's notice and the generation, so a cell shows the same
    whether the job ended before it ran or during it. The summary's time is the job's own,
    from the service's times (what a wait would have taken, had it started with the job)."""
    bar = Progress(f"Generation {generation.model}")
    created, completed = generation.created_at, generation.completed_at
    ran = (completed - created).total_seconds() if created and completed else None
    return _settled(magics, bar, generation, name, ran)


def _settled(
    magics: MagicSession, bar: Progress, final: Generation, name: str | None, took: float | None
) -> Any:
    took_text = "" if took is None else f" in {format_seconds(max(0.0, took))}"
    bar.close(f"{generation_message(final)}{took_text}", ok=final.status == "completed")
    magics.bind(name, final)
    if final.status == "failed":
        display(Notice(_failed_text(final), "error"))
    return show(final, name)


def show(generation: Any, name: str | None) -> Any:
    """Bound to a name: displayed (the cell's value stays quiet); else the cell's value."""
    if name:
        display(generation)
        return None
    return generation


def _failed_text(generation: Generation) -> str:
    error = generation.error
    code, message = (None, None) if error is None else (error.code, error.message)
    return (
        f"Generation {generation.id} failed: {code}: {message}. Nothing was charged (the "
        "reservation was returned)."
    )


def _interrupted_text(generation: Generation, name: str | None) -> str:
    gen_id, status = generation.id, generation.status
    bound = f" {name} holds it as last seen ({status})." if name else ""
    target = f" -o {name}" if name else ""
    return (
        f"Stopped waiting. Generation {gen_id} keeps running on the service and was not "
        f"resubmitted; it is charged only if it completes.{bound} "
        f"Re-attach with: %mediagen attach {gen_id}{target}"
    )

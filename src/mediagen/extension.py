"""``%load_ext mediagen``: generate from a notebook cell, see prices first, survive interrupts.

Loading the extension (``%load_ext mediagen``, or ``c.InteractiveShellApp.extensions =
["mediagen"]`` in an IPython profile) registers:

- the cell magic ``%%mediagen image|video|audio [--model M] [--FIELD VALUE ...] [-o NAME]
  [--yes] [--no-wait]``: the cell body is the prompt (the text, for speech). It shows the
  estimate, asks before spending more than ``confirm_above`` credits (unless ``--yes``), submits,
  shows the job live, and binds the finished generation to ``NAME``;
- the line magic ``%mediagen models [KIND] | credits | history [--since 7d] | studio |
  pending | attach ID [-o NAME] | help``;
- HTML display formatters for client models that do not render themselves.

Unloading removes all of it. Bad arguments give a usage message naming the allowed values
(IPython's ``UsageError``: no traceback), and nothing is sent.

A kernel interrupt while a cell waits stops the *waiting*, not the generation: the job keeps
running on the service, is never resubmitted, stays bound to ``NAME`` (pending), and
``%mediagen attach ID`` picks it up again. Configure the confirmation threshold with
``mediagen.extension.confirm_above = 100`` or ``%config MediagenMagics.confirm_above = 100``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any

from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display
from traitlets import Bool, Dict, Float, Unicode

from mediagen import _magics_client as mc
from mediagen._html import plural
from mediagen._magics_args import (
    CELL_USAGE,
    MagicUsageError,
    build_request,
    check_identifier,
    choose_model,
    did_you_mean,
    parse_cell_line,
    prompt_field,
)
from mediagen._magics_display import (
    FALLBACK_RENDERERS,
    CreditsView,
    EstimateView,
    Notice,
    credits_text,
    models_table,
)
from mediagen._progress import (
    Progress,
    expected_seconds,
    format_seconds,
    generation_callback,
    generation_message,
)
from mediagen.client import _progress_hook

#: The line magic's commands (``%mediagen NAME``), each handled by ``MediagenMagics._NAME``.
LINE_COMMANDS = ("models", "credits", "history", "studio", "pending", "attach")
#: Ask before a cell spends more than this many credits (after discount). ``--yes`` skips it.
confirm_above: float = 50.0
#: Longest a cell waits in the foreground, in seconds (the job itself is never cancelled).
wait_timeout: float = 3600.0
#: Seconds between polls while a cell waits (None: the client's own 2 s -> 5 s backoff).
wait_poll_interval: float | None = None

LINE_USAGE = (
    """\
%mediagen models [image|video|audio]     the catalog as a table
%mediagen credits                        balance, reservations, member cap
%mediagen history [--since 7d] [--type T] [--model M] [-o NAME]
                                         spend summary (NAME gets the full history frame)
%mediagen studio                         the interactive studio widget
%mediagen pending                        generations still running (e.g. after a restart)
%mediagen attach ID [-o NAME]            wait again for a generation and bind it
%mediagen attach --key KEY [-o NAME]     find an interrupted submit (charged at most once)
%mediagen help                           this text

"""
    + CELL_USAGE
)

_client: Any = None


def use_client(client: Any) -> None:
    """Make the magics use ``client`` (default: ``mediagen.Client()`` from the environment)."""
    global _client
    _client = client


def _user_error(message: str) -> UsageError:
    return UsageError(message)


@magics_class
class MediagenMagics(Magics):
    """The ``%mediagen`` / ``%%mediagen`` magics (see the module docstring)."""

    confirm_above = Float(
        None,
        allow_none=True,
        help="Ask before spending more than this many credits "
        "(default: mediagen.extension.confirm_above).",
    ).tag(config=True)
    ask = Bool(
        True,
        help="Ask (input prompt) before spending more than confirm_above; False never asks and "
        "sends nothing above it without --yes (for notebooks run unattended, e.g. Run All).",
    ).tag(config=True)
    default_models = Dict(
        value_trait=Unicode(),
        help="Model used per kind when --model is not given, e.g. {'video': 'vidra-2'} "
        "(default: the first catalog model of that kind).",
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._own_client: Any = None
        #: idempotency key -> (kind, request) of submits interrupted before an answer
        self._unconfirmed: dict[str, tuple[str, dict[str, Any]]] = {}

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        if _client is not None:
            return _client
        if self._own_client is None:
            import mediagen

            try:
                self._own_client = mediagen.Client()
            except Exception as exc:  # the client says what is missing (never the key itself)
                raise _user_error(
                    f"cannot connect: {exc}\nSet MEDIAGEN_API_KEY (and MEDIAGEN_BASE_URL), or "
                    "run `mediagen lab`, or call mediagen.extension.use_client(client)."
                ) from None
        return self._own_client

    def threshold(self) -> float:
        return float(self.confirm_above if self.confirm_above is not None else confirm_above)

    @property
    def _user_ns(self) -> dict[str, Any]:
        """The notebook's variables (the shell is always set once the extension is loaded)."""
        shell: Any = self.shell
        return shell.user_ns

    def _bind(self, name: str | None, value: Any) -> None:
        if name:
            self._user_ns[name] = value

    def _lookup(self, text: str) -> tuple[bool, Any]:
        if text.isidentifier() and text in self._user_ns:
            return True, self._user_ns[text]
        return False, None

    def _resolve_asset(self, name: str, value: Any, media: Any) -> str:
        """An asset id from an id, a variable (generation, output, asset) or a local file."""
        if isinstance(value, str):
            found, obj = self._lookup(value)
            if found:
                return self._resolve_asset(name, obj, media)
            if value.startswith("asset_"):
                return value
            path = os.path.expanduser(value)
            if os.path.isfile(path):
                with Progress(f"Uploading {os.path.basename(path)}", unit="file") as bar:
                    asset_id = mc.upload(self.client, path)
                    bar.update(1, message=asset_id)
                return asset_id
            raise MagicUsageError(
                f"--{name}: {value!r} is not an asset id, a file, or a variable holding a "
                "generation or an output"
            )
        if mc.field(value, "outputs") is not None:  # a Generation: its first output
            if mc.field(value, "status") != "completed" or not mc.field(value, "outputs"):
                raise MagicUsageError(
                    f"--{name}: generation {mc.field(value, 'id')} is "
                    f"{mc.field(value, 'status')}; only a completed one has outputs to use"
                )
            value = mc.field(value, "outputs")[0]
        asset_id = mc.field(value, "asset_id")
        if not asset_id:
            raise MagicUsageError(f"--{name}: {type(value).__name__} has no asset_id")
        return str(asset_id)

    # -- the magic --------------------------------------------------------------------------

    @line_cell_magic
    def mediagen(self, line: str, cell: str | None = None) -> Any:
        """Generate media from a cell, or inspect the service. Run `%mediagen help`."""
        try:
            if cell is None:
                return self._line(line)
            return self._cell(line, cell)
        except MagicUsageError as exc:
            raise _user_error(str(exc)) from None
        except Exception as exc:
            error = _api_error_text(exc)
            if error is None:
                raise
            display(Notice(error, "error"))
            return None

    # -- cell: generate ---------------------------------------------------------------------

    def _cell(self, line: str, cell: str) -> Any:
        options = parse_cell_line(line)
        client = self.client
        entries = mc.list_models(client, options.kind)
        default = self.default_models.get(options.kind)
        entry = choose_model(options.kind, entries, options.model, default)
        request = build_request(
            entry,
            options,
            cell,
            resolve_asset=self._resolve_asset,
            lookup=self._lookup,
        )
        estimate = mc.estimate(client, request)
        display(EstimateView(request, estimate, prompt_field(entry)))
        if mc.field(estimate, "allowed") is False:
            display(Notice("Not submitted: this model is not available on your plan.", "error"))
            return None
        if mc.field(estimate, "can_afford") is False:
            display(Notice("Not submitted: the balance does not cover this estimate.", "error"))
            return None
        price = mc.field(estimate, "credits_after_discount")
        needs_consent = price is not None and float(price) > self.threshold()
        if needs_consent and not options.yes and not self._confirm(price):
            display(Notice("Not submitted; nothing was spent.", "info"))
            return None
        generation = self._submit(options.kind, request, options.output_name)
        if generation is None:
            return None
        self._bind(options.output_name, generation)
        if not options.wait:
            display(
                Notice(
                    f"Submitted generation {mc.field(generation, 'id')} (pending). "
                    f"Wait for it with: %mediagen attach {mc.field(generation, 'id')}"
                    + (f" -o {options.output_name}" if options.output_name else ""),
                    "info",
                )
            )
            return None
        return self._wait_and_show(generation, options.output_name)

    def _confirm(self, price: Any) -> bool:
        question = (
            f"This will spend {credits_text(price)} credits (more than "
            f"{credits_text(self.threshold())}). Submit? [y/N] "
        )
        cannot_ask = Notice(
            "Cannot ask for confirmation here (no input); add --yes to the magic line "
            "to spend without asking.",
            "warn",
        )
        if not self.ask:
            display(cannot_ask)
            return False
        try:
            answer = input(question)
        except (StdinNotImplementedError, EOFError, OSError):
            display(cannot_ask)
            return False
        return answer.strip().lower() in ("y", "yes")

    def _submit(self, kind: str, request: dict[str, Any], name: str | None) -> Any:
        key = mc.new_idempotency_key()
        self._unconfirmed[key] = (kind, request)
        try:
            generation = mc.submit(self.client, kind, request, key)
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
        self._unconfirmed.pop(key, None)
        return generation

    def _wait_and_show(self, generation: Any, name: str | None) -> Any:
        """Wait in the foreground with live progress; an interrupt leaves the job running."""
        latest = [generation]
        model = mc.field(generation, "model")
        expected = expected_seconds(getattr(self.client, "journal", None), model)
        bar = Progress(f"Generation {model}", expected=expected)
        show_progress = generation_callback(bar)

        def on_poll(polled: Any, *args: Any, **kwargs: Any) -> None:
            latest[0] = polled
            show_progress(polled)

        try:
            final = mc.wait(
                self.client,
                generation,
                on_poll=on_poll,
                timeout=wait_timeout,
                poll_interval=wait_poll_interval,
            )
        except KeyboardInterrupt:
            current = latest[0]
            bar.close(f"stopped waiting after {format_seconds(bar.elapsed)}", ok=False)
            self._bind(name, current)
            display(Notice(_interrupted_text(current, name), "warn"))
            return None
        except BaseException:
            bar.close(f"stopped after {format_seconds(bar.elapsed)}", ok=False)
            raise
        bar.close(
            f"{generation_message(final)} in {format_seconds(bar.elapsed)}",
            ok=mc.field(final, "status") == "completed",
        )
        self._bind(name, final)
        if mc.field(final, "status") == "failed":
            error = mc.field(final, "error")
            display(
                Notice(
                    f"Generation {mc.field(final, 'id')} failed: {mc.field(error, 'code')}: "
                    f"{mc.field(error, 'message')}. Nothing was charged (the reservation was "
                    "returned).",
                    "error",
                )
            )
        if name:
            display(final)
            return None
        return final

    # -- line magics ------------------------------------------------------------------------

    def _line(self, line: str) -> Any:
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise MagicUsageError(f"cannot parse the line ({exc})\n\n{LINE_USAGE}") from None
        if not words or words[0] in ("help", "-h", "--help"):
            print(LINE_USAGE)
            return None
        command, args = words[0], words[1:]
        handler = {name: getattr(self, f"_{name}") for name in LINE_COMMANDS}.get(command)
        if handler is None:
            if command in ("image", "video", "audio"):
                raise MagicUsageError(
                    f"to generate, use the cell magic: %%mediagen {command} ... with the prompt "
                    "in the cell body"
                )
            hint = did_you_mean(command, [*LINE_COMMANDS, "help"])
            raise MagicUsageError(
                f"unknown command {command!r}{hint}; commands: models, credits, history, studio, "
                f"pending, attach, help\n\n{LINE_USAGE}"
            )
        return handler(args)

    def _models(self, args: list[str]) -> Any:
        kinds = ("image", "video", "audio")
        if len(args) > 1 or (args and args[0] not in kinds):
            raise MagicUsageError(f"usage: %mediagen models [{'|'.join(kinds)}]")
        return models_table(mc.list_models(self.client, args[0] if args else None))

    def _credits(self, args: list[str]) -> Any:
        if args:
            raise MagicUsageError("usage: %mediagen credits")
        return CreditsView(mc.credits(self.client))

    def _history(self, args: list[str]) -> Any:
        options = _parse_options(
            args, {"since": str, "type": str, "model": str, "o": str}, "%mediagen history"
        )
        filters: dict[str, Any] = {}
        if options.get("type"):
            if options["type"] not in ("image", "video", "audio"):
                raise MagicUsageError("--type: allowed values: image, video, audio")
            filters["type"] = options["type"]
        if options.get("model"):
            filters["model"] = options["model"]
        since = options.get("since")
        if since:
            filters["created_after"] = parse_since(since).isoformat()
        name = check_identifier(options["o"]) if options.get("o") else None
        from mediagen import history
        from mediagen.history._fetch import iter_generation_pages

        client = self.client
        with Progress("Fetching history", unit="page") as bar:
            rows = 0

            def pages() -> Iterator[Mapping[str, Any]]:
                nonlocal rows
                for page in iter_generation_pages(client, filters):
                    rows += len(page.get("data") or ())
                    bar.advance(message=plural(rows, "generation"))
                    yield page

            try:
                frame = history.frame_from_pages(pages(), journal=getattr(client, "journal", None))
            except KeyboardInterrupt:
                bar.close(
                    f"interrupted after {plural(rows, 'generation')}; nothing was changed", ok=False
                )
                return None
        self._bind(name, frame)
        return HistorySummary(frame, since)

    def _studio(self, args: list[str]) -> Any:
        if args:
            raise MagicUsageError("usage: %mediagen studio")
        from mediagen import widgets

        return widgets.studio(client=self.client)

    def _pending(self, args: list[str]) -> Any:
        if args:
            raise MagicUsageError("usage: %mediagen pending")
        pending = list(self.client.generations.list(status="pending"))
        if not pending:
            return Notice("No generation is pending.", "ok")
        lines = [
            f"{mc.field(g, 'id')}  {mc.field(g, 'type')}  {mc.field(g, 'model')}  "
            f"created {mc.field(g, 'created_at')}"
            for g in pending
        ]
        return Notice(
            f"{len(pending)} pending (re-attach with %mediagen attach ID -o NAME):\n"
            + "\n".join(lines),
            "info",
        )

    def _attach(self, args: list[str]) -> Any:
        options = _parse_options(
            args, {"key": str, "o": str, "_": str}, "%mediagen attach ID|--key KEY [-o NAME]"
        )
        name = check_identifier(options["o"]) if options.get("o") else None
        if options.get("key"):
            key = options["key"]
            if key not in self._unconfirmed:
                raise MagicUsageError(
                    f"no interrupted submit with key {key!r} in this session; "
                    "see `%mediagen pending` for generations still running"
                )
            kind, request = self._unconfirmed[key]
            generation = mc.submit(self.client, kind, request, key)
            self._unconfirmed.pop(key, None)
        elif options.get("_"):
            generation = mc.get_generation(self.client, options["_"])
        else:
            raise MagicUsageError("usage: %mediagen attach ID [-o NAME] | --key KEY [-o NAME]")
        self._bind(name, generation)
        if mc.is_terminal(generation):
            if name:
                display(generation)
                return None
            return generation
        return self._wait_and_show(generation, name)


class HistorySummary:
    """``%mediagen history``: headline numbers, spend by model and by day."""

    def __init__(self, frame: Any, since: str | None) -> None:
        from mediagen import history

        self.frame = frame
        self.since = since
        self.headline = history.headline(frame)
        self.by_model = history.spend_by_model(frame)
        self.by_day = history.spend_by_period(frame, "D")

    def _title(self) -> str:
        scope = f" in the last {self.since}" if self.since else ""
        h = self.headline
        rate = h["failure_rate"]
        rate_text = "n/a" if rate != rate else f"{rate:.0%}"  # NaN when nothing finished
        return (
            f"{plural(h['generations'], 'generation')}{scope}: "
            f"{credits_text(h['spent'])} credits spent, "
            f"{h['completed']} completed, {h['failed']} failed ({rate_text} failure rate), "
            f"{h['pending']} pending"
        )

    def __repr__(self) -> str:
        return (
            f"{self._title()}\n\nSpend by model:\n{self.by_model.to_string()}"
            f"\n\nSpend by day:\n{self.by_day.to_string()}"
        )

    def _repr_html_(self) -> str:
        import html

        return (
            f"<div class='mediagen-history'><p><b>{html.escape(self._title())}</b></p>"
            f"<p>Spend by model</p>{self.by_model.to_html()}"
            f"<p>Spend by day</p>{self.by_day.to_html()}</div>"
        )


_SINCE = re.compile(r"^(\d+(?:\.\d+)?)\s*([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """``7d``, ``24h``, ``30m``, ``2w`` ago, or an ISO date/time; always timezone-aware."""
    now = now or dt.datetime.now(dt.timezone.utc)
    match = _SINCE.match(text.strip().lower())
    if match:
        return now - dt.timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        raise MagicUsageError(
            f"--since: use an age like 30m, 24h, 7d, 2w or an ISO date (got {text!r})"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


def _parse_options(args: list[str], spec: Mapping[str, type], usage: str) -> dict[str, Any]:
    """``--name value`` / ``-o value`` pairs; ``_`` in ``spec`` takes one positional word."""
    found: dict[str, Any] = {}
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("-"):
            name = word.lstrip("-")
            if name not in spec or name == "_":
                allowed = ", ".join(("-" if len(n) == 1 else "--") + n for n in spec if n != "_")
                raise MagicUsageError(f"unknown option {word}; options: {allowed}\nusage: {usage}")
            if i + 1 >= len(args):
                raise MagicUsageError(f"{word} needs a value\nusage: {usage}")
            found[name] = args[i + 1]
            i += 2
        elif "_" in spec and "_" not in found:
            found["_"] = word
            i += 1
        else:
            raise MagicUsageError(f"unexpected {word!r}\nusage: {usage}")
    return found


def _interrupted_text(generation: Any, name: str | None) -> str:
    gen_id = mc.field(generation, "id")
    status = mc.field(generation, "status")
    bound = f" {name} holds it as last seen ({status})." if name else ""
    target = f" -o {name}" if name else ""
    return (
        f"Stopped waiting. Generation {gen_id} keeps running on the service and was not "
        f"resubmitted; it is charged only if it completes.{bound} "
        f"Re-attach with: %mediagen attach {gen_id}{target}"
    )


def _api_error_text(exc: Exception) -> str | None:
    """A readable message for a client error (status, code, message, field details), else None."""
    try:
        import mediagen
    except ImportError:  # pragma: no cover
        return None
    api_error = getattr(mediagen, "APIError", None)
    base_errors = tuple(
        e
        for e in (api_error, getattr(mediagen, "MediagenError", None))
        if isinstance(e, type) and issubclass(e, BaseException)
    )
    if not base_errors or not isinstance(exc, base_errors):
        return None
    status = getattr(exc, "status", None)
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None) or str(exc)
    head = " ".join(str(p) for p in (status, code) if p)
    lines = [f"{head}: {message}" if head else message]
    for detail in getattr(exc, "details", None) or ():
        loc = mc.field(detail, "loc") or ()
        where = ".".join(str(p) for p in loc if p not in ("body", "query"))
        lines.append(f"  {where or '(request)'}: {mc.field(detail, 'msg')}")
    trace = getattr(exc, "trace_id", None)
    if trace:
        lines.append(f"(trace id {trace})")
    return "\n".join(lines)


# -- loading ----------------------------------------------------------------------------------

_LOADED: dict[int, dict[str, Any]] = {}


def _client_model_types() -> list[tuple[type, Any]]:
    """Client model classes without their own ``_repr_html_``, with a fallback renderer."""
    import mediagen

    found = []
    for class_name, renderer in FALLBACK_RENDERERS.items():
        cls = getattr(mediagen, class_name, None)
        if isinstance(cls, type) and not hasattr(cls, "_repr_html_"):
            found.append((cls, renderer))
    return found


#: how the client names a foreground wait (``client.generations.wait``) in its progress hook
_WAITING_FOR = "Waiting for generation "


def _reporter(description: str, unit: str, total: int | None) -> Progress:
    expected = None
    if description.startswith(_WAITING_FOR):
        expected = _expected_for(description[len(_WAITING_FOR) :].strip())
    return Progress(description, total, unit=unit, expected=expected)


def _expected_for(generation_id: str) -> float | None:
    """How long a generation's model usually takes, from the default journal (a client with a
    cache of its own keeps its own journal: then no expectation is shown)."""
    from mediagen.client._config import default_cache_dir
    from mediagen.journal import Journal

    journal = Journal(default_cache_dir() / "journal.jsonl")
    try:
        model = journal.latest().get(generation_id, {}).get("model")
    except OSError:
        return None
    return expected_seconds(journal, model)


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and display formatters (idempotent: a second load is a no-op)."""
    if id(ipython) in _LOADED:
        return
    magics = MediagenMagics(shell=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    html_formatter = ipython.display_formatter.formatters["text/html"]
    registered = []
    for cls, renderer in _client_model_types():
        previous = html_formatter.for_type(cls, renderer)
        registered.append((cls, previous))
    # the client's long operations (waits, history fetches, batches) now show progress
    previous_reporter = _progress_hook.install(_reporter)
    _LOADED[id(ipython)] = {
        "magics": magics,
        "formatters": registered,
        "reporter": previous_reporter,
    }


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what ``load_ipython_extension`` added."""
    state = _LOADED.pop(id(ipython), None)
    if state is None:
        return
    _progress_hook.install(state["reporter"])
    magics = state["magics"]
    for kind in ("line", "cell"):
        table = ipython.magics_manager.magics[kind]
        if getattr(table.get("mediagen"), "__self__", None) is magics:
            del table["mediagen"]
    registry = ipython.magics_manager.registry
    for key, value in list(registry.items()):
        if value is magics:
            del registry[key]
    if magics in ipython.configurables:
        ipython.configurables.remove(magics)
    html_formatter = ipython.display_formatter.formatters["text/html"]
    for cls, previous in state["formatters"]:
        html_formatter.pop(cls, None)
        if previous is not None:
            html_formatter.for_type(cls, previous)

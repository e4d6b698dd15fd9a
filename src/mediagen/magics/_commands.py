"""The line magic ``%mediagen COMMAND ...``: one function per command.

Each command's options are fixed, so they are declared with IPython's ``magic_arguments``
(argparse underneath); a mistake becomes a usage message naming the command's options.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shlex
from collections.abc import Callable, Sized
from typing import Any

from IPython.core import magic_arguments as _declare
from IPython.core.error import UsageError

from mediagen.display._html import plural
from mediagen.display._progress import Progress
from mediagen.magics._cell_line import (
    CELL_USAGE,
    KINDS,
    MagicUsageError,
    check_identifier,
    did_you_mean,
)
from mediagen.magics._display import CreditsView, HistorySummary, Notice, models_table
from mediagen.magics._generate import list_models, resubmit, show_settled, wait_and_show
from mediagen.magics._session import MagicSession

LINE_USAGE = (
    """\
%mediagen models [image|video|audio]     the catalog as a table
%mediagen credits                        balance, reservations, member cap
%mediagen history [--since 7d] [--type T] [--model M] [-o NAME] [--offline]
                                         spend summary from the local history store, synced
                                         first (NAME gets the full history frame)
%mediagen studio                         the interactive studio widget
%mediagen pending                        generations still running (e.g. after a restart)
%mediagen attach ID [-o NAME]            wait again for a generation and bind it
%mediagen attach --key KEY [-o NAME]     find an interrupted submit (charged at most once)
%mediagen help                           this text

"""
    + CELL_USAGE
)

Command = Callable[[MagicSession, argparse.Namespace], Any]
#: IPython's declarations of a command's arguments, as their types would say (IPython has no
#: type hints): each hands back the command it decorates, its parser attached
Declaration = Callable[[Command], Command]
magic_arguments: Callable[[], Declaration] = _declare.magic_arguments
kwds: Callable[..., Declaration] = _declare.kwds
argument: Callable[..., Declaration] = _declare.argument


def run_line(magics: MagicSession, line: str) -> Any:
    """Dispatch ``%mediagen COMMAND ARGS`` to the command's function."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise MagicUsageError(f"cannot parse the line ({exc})\n\n{LINE_USAGE}") from None
    if not words or words[0] in ("help", "-h", "--help"):
        print(LINE_USAGE)
        return None
    command, args = words[0], words[1:]
    function = COMMANDS.get(command)
    if function is None:
        raise MagicUsageError(_unknown_command(command))
    return function(magics, _parse(function, args))


def _unknown_command(command: str) -> str:
    if command in KINDS:
        return (
            f"to generate, use the cell magic: %%mediagen {command} ... with the prompt "
            "in the cell body"
        )
    names = [*COMMANDS, "help"]
    return (
        f"unknown command {command!r}{did_you_mean(command, names)}; commands: "
        f"{', '.join(names)}\n\n{LINE_USAGE}"
    )


def _parse(function: Command, args: list[str]) -> argparse.Namespace:
    """The command's arguments; argparse's complaint becomes a usage message with the options."""
    parser = function.parser  # type: ignore[attr-defined]  # set by @magic_arguments
    try:
        parsed: argparse.Namespace = parser.parse_args(args)
        return parsed
    except UsageError as exc:
        options = [a.option_strings[0] for a in parser._actions if a.option_strings]
        allowed = f"; options: {', '.join(options)}" if options else ""
        usage = parser.usage % {"prog": parser.prog}  # argparse's own expansion of the text
        raise MagicUsageError(f"{exc}{allowed}\nusage: {usage}") from None


def _variable_name(text: str) -> str:
    try:
        return check_identifier(text)
    except MagicUsageError as exc:  # argparse reports this kind with the option's name
        raise argparse.ArgumentTypeError(str(exc)) from None


@magic_arguments()
@kwds(usage="%%mediagen models [image|video|audio]")
@argument("kind", nargs="?", choices=KINDS)
def _models(magics: MagicSession, args: argparse.Namespace) -> Any:
    """The catalog as a table."""
    return models_table(list_models(magics.client, args.kind))


@magic_arguments()
@kwds(usage="%%mediagen credits")
def _credits(magics: MagicSession, args: argparse.Namespace) -> Any:
    """Balance, reservations, member cap."""
    return CreditsView(magics.client.credits.get())


@magic_arguments()
@kwds(usage="%%mediagen history [--since 7d] [--type T] [--model M] [-o NAME] [--offline]")
@argument("--since", help="an age (30m, 24h, 7d, 2w) or an ISO date")
@argument("--type", choices=KINDS)
@argument("--model")
@argument("-o", dest="name", type=_variable_name, help="variable that gets the full frame")
@argument("--offline", action="store_true", help="read the local store without syncing")
def _history(magics: MagicSession, args: argparse.Namespace) -> Any:
    """Spend summary from the local history store, synced first (only what is new is fetched);
    ``-o NAME`` also binds the full history frame."""
    from mediagen import history

    filters: dict[str, Any] = {"type": args.type, "model": args.model}
    if args.since:
        filters["created_after"] = parse_since(args.since)
    with Progress("Fetching history", unit="page") as bar:
        rows = 0

        def on_page(page: Sized) -> None:
            nonlocal rows
            rows += len(page)
            bar.advance(message=plural(rows, "generation"))

        try:
            frame = history.stored_frame(
                magics.client, sync=not args.offline, on_page=on_page, **filters
            )
        except KeyboardInterrupt:
            bar.close(
                f"interrupted after {plural(rows, 'generation')}; the store keeps what was "
                "synced, and the next sync resumes there",
                ok=False,
            )
            return None
    magics.bind(args.name, frame)
    return HistorySummary(frame, args.since)


@magic_arguments()
@kwds(usage="%%mediagen studio")
def _studio(magics: MagicSession, args: argparse.Namespace) -> Any:
    """The interactive studio widget."""
    from mediagen import widgets

    return widgets.studio(client=magics.client)


@magic_arguments()
@kwds(usage="%%mediagen pending")
def _pending(magics: MagicSession, args: argparse.Namespace) -> Any:
    """Generations still running (e.g. after a restart)."""
    pending = list(magics.client.generations.list(status="pending"))
    if not pending:
        return Notice("No generation is pending.", "ok")
    lines = [f"{g.id}  {g.type}  {g.model}  created {g.created_at}" for g in pending]
    return Notice(
        f"{len(pending)} pending (re-attach with %mediagen attach ID -o NAME):\n"
        + "\n".join(lines),
        "info",
    )


@magic_arguments()
@kwds(usage="%%mediagen attach ID [-o NAME] | --key KEY [-o NAME]")
@argument("id", nargs="?", help="a generation id")
@argument("--key", help="the idempotency key of an interrupted submit")
@argument("-o", dest="name", type=_variable_name, help="variable that gets the generation")
def _attach(magics: MagicSession, args: argparse.Namespace) -> Any:
    """Wait again for a generation (or an interrupted submit) and bind it."""
    if args.key:
        generation = resubmit(magics, args.key)
    elif args.id:
        generation = magics.client.generations.get(args.id)
    else:
        raise MagicUsageError("usage: %mediagen attach ID [-o NAME] | --key KEY [-o NAME]")
    if generation.is_terminal:
        return show_settled(magics, generation, args.name)
    magics.bind(args.name, generation)
    return wait_and_show(magics, generation, args.name)


#: ``%mediagen NAME`` -> its function
COMMANDS: dict[str, Command] = {
    "models": _models,
    "credits": _credits,
    "history": _history,
    "studio": _studio,
    "pending": _pending,
    "attach": _attach,
}

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

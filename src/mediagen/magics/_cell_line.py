"""The ``%%mediagen`` magic line, split into the magic's own options and raw request fields.

No client, no IPython, no catalog: the fields are checked against the model's catalog entry
later (``_request``). Every mistake a user can make on the magic line becomes a
``MagicUsageError`` whose message names the option and the values that are allowed, so the magic
can show a usage message instead of a traceback, and nothing is sent to the service.

The line is ``KIND [--model M] [--mode MODE] [--FIELD VALUE ...] [-o NAME] [--yes] [--no-wait]``.
``--FIELD`` is any request field the model's catalog entry lists (``--generate-audio`` and
``--generate_audio`` are the same flag; a boolean flag alone means true).
"""

from __future__ import annotations

import difflib
import keyword
import shlex
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

KINDS = ("image", "video", "audio")
TRUE_WORDS = ("true", "yes", "on", "1")
FALSE_WORDS = ("false", "no", "off", "0")

CELL_USAGE = (
    "%%mediagen image|video|audio [--model MODEL] [--mode MODE] [--FIELD VALUE ...] "
    "[-o NAME] [--yes] [--no-wait]\n"
    "The cell body is the prompt (the text to speak, for a speech model).\n"
    "FIELD is any request field of the model (see `%mediagen models KIND`); a boolean flag alone "
    "means true; reference fields take an asset id, an uploaded file path, or the name of a "
    "variable holding a generation or an output."
)


class MagicUsageError(ValueError):
    """A mistake on the magic line; the message says what is allowed."""


@dataclass
class CellOptions:
    """The magic line, split into the magic's own options and raw request fields."""

    kind: str
    model: str | None = None
    mode: str | None = None
    output_name: str | None = None
    yes: bool = False
    wait: bool = True
    #: flag name (underscored) -> raw text, or True for a bare flag
    fields: dict[str, str | bool] = field(default_factory=dict)


def did_you_mean(word: str, known: Iterable[str], prefix: str = "") -> str:
    """``"; did you mean --quality?"`` for a near miss, else ``""`` (as the client says it)."""
    close = difflib.get_close_matches(word, list(known), n=1)
    return f"; did you mean {prefix}{close[0]}?" if close else ""


def _flag_name(token: str) -> str:
    return token.lstrip("-").replace("-", "_")


def parse_cell_line(line: str) -> CellOptions:
    """Split the magic line. Raises ``MagicUsageError`` for a malformed line."""
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise MagicUsageError(f"cannot parse the magic line ({exc})\n\n{CELL_USAGE}") from None
    if not tokens or tokens[0] in ("-h", "--help"):
        raise MagicUsageError(CELL_USAGE)
    kind = tokens[0]
    if kind not in KINDS:
        raise MagicUsageError(
            f"the first word must be the media kind, one of: {', '.join(KINDS)} "
            f"(got {kind!r}{did_you_mean(kind, KINDS)})\n\n{CELL_USAGE}"
        )
    options = CellOptions(kind=kind)
    for name, value in _flags(tokens[1:]):
        setter = _MAGIC_FLAGS.get(name)
        if setter is not None:
            setter(options, name, value)
        elif name in options.fields:
            raise MagicUsageError(f"--{name} is given twice")
        else:
            options.fields[name] = True if value is None else value
    return options


def _flags(tokens: list[str]) -> Iterator[tuple[str, str | None]]:
    """``(name, value)`` per flag: ``--a=1``, ``--a 1``, or a bare ``--a`` (value None)."""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not token.startswith("-") or token in ("-", "--"):
            raise MagicUsageError(
                f"unexpected word {token!r}: options start with --\n\n{CELL_USAGE}"
            )
        value: str | None = None
        if "=" in token and token.startswith("--"):
            token, value = token.split("=", 1)
        if value is None and i + 1 < len(tokens) and not _looks_like_flag(tokens[i + 1]):
            value = tokens[i + 1]
            i += 1
        i += 1
        yield _flag_name(token), value


def _needs_value(name: str, value: str | None) -> str:
    if value is None:
        raise MagicUsageError(f"--{name} needs a value\n\n{CELL_USAGE}")
    return value


def _set_yes(options: CellOptions, name: str, value: str | None) -> None:
    options.yes = _bool_option(name, value)


def _set_no_wait(options: CellOptions, name: str, value: str | None) -> None:
    options.wait = not _bool_option(name, value)


def _show_help(options: CellOptions, name: str, value: str | None) -> None:
    raise MagicUsageError(CELL_USAGE)


def _set_model(options: CellOptions, name: str, value: str | None) -> None:
    options.model = _needs_value(name, value)


def _set_mode(options: CellOptions, name: str, value: str | None) -> None:
    options.mode = _needs_value(name, value)


def _set_output(options: CellOptions, name: str, value: str | None) -> None:
    options.output_name = check_identifier(_needs_value(name, value))


#: The magic's own flags (every other flag is a request field), each with what it sets.
_MAGIC_FLAGS: dict[str, Callable[[CellOptions, str, str | None], None]] = {
    "yes": _set_yes,
    "y": _set_yes,
    "no_wait": _set_no_wait,
    "h": _show_help,
    "help": _show_help,
    "model": _set_model,
    "m": _set_model,
    "mode": _set_mode,
    "o": _set_output,
    "output": _set_output,
    "name": _set_output,
}


def _looks_like_flag(word: str) -> bool:
    """``--x`` and ``-o`` are flags; ``-3`` and ``-0.5`` are (negative) values."""
    if not word.startswith("-") or len(word) == 1:
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def _bool_option(name: str, value: str | None) -> bool:
    if value is None:
        return True
    return parse_bool(name, value)


def check_identifier(name: str) -> str:
    """``-o NAME`` must be a Python variable name."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise MagicUsageError(f"-o needs a Python variable name, not {name!r}")
    return name


def parse_bool(name: str, text: str | bool) -> bool:
    if isinstance(text, bool):
        return text
    lowered = text.strip().lower()
    if lowered in TRUE_WORDS:
        return True
    if lowered in FALSE_WORDS:
        return False
    raise MagicUsageError(f"--{name} is a yes/no option: use true or false (got {text!r})")

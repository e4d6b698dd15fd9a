"""The ``MediagenMagics`` class: configuration, the user's namespace, and one entry point.

The class holds what a magic run needs from IPython (the shell's namespace, the traitlets
configuration) and hands the work to ``_generate`` (the cell) and ``_commands`` (the line).
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.display import display
from traitlets import Bool, Dict, Float, Unicode

from mediagen.client import Client
from mediagen.magics import _commands, _generate, _settings as settings
from mediagen.magics._cell_line import MagicUsageError
from mediagen.magics._display import Notice, api_error_text


@magics_class
class MediagenMagics(Magics):
    """The ``%mediagen`` / ``%%mediagen`` magics (see ``mediagen.magics``)."""

    confirm_above = Float(
        None,
        allow_none=True,
        help="Ask before spending more than this many credits "
        "(default: mediagen.magics.confirm_above).",
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
        self._own_client: Client | None = None

    @property
    def client(self) -> Client:
        if settings._client is not None:
            return settings._client
        if self._own_client is None:
            try:
                self._own_client = Client()
            except Exception as exc:  # the client says what is missing (never the key itself)
                raise UsageError(
                    f"cannot connect: {exc}\nSet MEDIAGEN_API_KEY (and MEDIAGEN_BASE_URL), or "
                    "run `mediagen lab`, or call mediagen.magics.use_client(client)."
                ) from None
        return self._own_client

    def threshold(self) -> float:
        if self.confirm_above is not None:
            return float(self.confirm_above)
        return float(settings.confirm_above)

    @property
    def user_ns(self) -> dict[str, Any]:
        """The notebook's variables (the shell is always set once the extension is loaded)."""
        shell: Any = self.shell
        found: dict[str, Any] = shell.user_ns
        return found

    def bind(self, name: str | None, value: Any) -> None:
        if name:
            self.user_ns[name] = value

    def lookup(self, text: str) -> tuple[bool, Any]:
        if text.isidentifier() and text in self.user_ns:
            return True, self.user_ns[text]
        return False, None

    @line_cell_magic
    def mediagen(self, line: str, cell: str | None = None) -> Any:
        """Generate media from a cell, or inspect the service. Run `%mediagen help`."""
        try:
            if cell is None:
                return _commands.run_line(self, line)
            return _generate.run_cell(self, line, cell)
        except MagicUsageError as exc:
            raise UsageError(str(exc)) from None
        except Exception as exc:
            error = api_error_text(exc)
            if error is None:
                raise
            display(Notice(error, "error"))
            return None

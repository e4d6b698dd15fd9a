"""What a magic's run needs from the ``MediagenMagics`` that runs it, as a protocol.

``_generate`` (the cell) and ``_commands`` (the line) take the magics object this way, so they
sit below ``_magics``, which calls them, instead of naming its class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mediagen.client import Client


class MagicSession(Protocol):
    """The client, the user's namespace and the settings of one loaded extension."""

    @property
    def client(self) -> Client: ...

    @property
    def ask(self) -> bool: ...

    @property
    def default_models(self) -> dict[str, str]: ...

    def threshold(self) -> float: ...

    def bind(self, name: str | None, value: Any) -> None: ...

    def lookup(self, text: str) -> tuple[bool, Any]: ...

"""The wire client: ``Client`` (blocking) and ``AsyncClient`` over one sans-I/O core.

Operations are written once as generators of effects (``_effects``); requests are built and
responses parsed, and retries decided, by pure functions (``_requests``).
``Client`` and ``AsyncClient`` only perform the effects. Every name the spec leaves open lives
in ``_wire``. Nothing here imports pandas, ipywidgets or IPython.

The names below are loaded on first use (PEP 562): a script that builds a ``Client`` pays for
the modules a client needs, not for batches, uploads or the asyncio twin it never touches. The
imports under ``TYPE_CHECKING`` are what editors and type checkers read.
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mediagen.client._budget import Budget, SpendLimit, SpendLimitExceededError, budget
    from mediagen.client._clients import (
        AsyncClient,
        BatchItem,
        BatchResult,
        Client,
        Generation,
        GenerationOutput,
    )
    from mediagen.client._config import MissingAPIKeyError
    from mediagen.client._errors import (
        APIConnectionError,
        APIError,
        APITimeoutError,
        AuthenticationError,
        BadRequestError,
        BudgetExceededError,
        ConflictError,
        GenerationFailedError,
        Interrupted,
        LocalValidationError,
        MediagenError,
        NotFoundError,
        PaymentRequiredError,
        PermissionDeniedError,
        RateLimitError,
        ServerError,
        SubmitInterrupted,
        UnexpectedResponseError,
        UnknownFieldError,
        ValidationError,
        WaitInterrupted,
        WaitTimeoutError,
    )
    from mediagen.client._models import (
        Asset,
        Credits,
        Estimate,
        GenerationErrorInfo,
        MemberLimit,
        ModelInfo,
        UploadTicket,
    )
    from mediagen.client._transport import DownloadError

#: the module of this package that defines each public name
_HOMES = {
    "_batch": ("BatchItem", "BatchResult"),
    "_budget": ("Budget", "SpendLimit", "SpendLimitExceededError", "budget"),
    "_clients": ("AsyncClient", "Client"),
    "_config": ("MissingAPIKeyError",),
    "_transport": ("DownloadError",),
    "_errors": (
        "APIConnectionError",
        "APIError",
        "APITimeoutError",
        "AuthenticationError",
        "BadRequestError",
        "BudgetExceededError",
        "ConflictError",
        "GenerationFailedError",
        "Interrupted",
        "LocalValidationError",
        "MediagenError",
        "NotFoundError",
        "PaymentRequiredError",
        "PermissionDeniedError",
        "RateLimitError",
        "ServerError",
        "SubmitInterrupted",
        "UnexpectedResponseError",
        "UnknownFieldError",
        "ValidationError",
        "WaitInterrupted",
        "WaitTimeoutError",
    ),
    "_models": (
        "Asset",
        "Credits",
        "Estimate",
        "Generation",
        "GenerationErrorInfo",
        "GenerationOutput",
        "MemberLimit",
        "ModelInfo",
        "UploadTicket",
    ),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "Asset",
    "AsyncClient",
    "AuthenticationError",
    "BadRequestError",
    "BatchItem",
    "BatchResult",
    "Budget",
    "BudgetExceededError",
    "Client",
    "ConflictError",
    "Credits",
    "DownloadError",
    "Estimate",
    "Generation",
    "GenerationErrorInfo",
    "GenerationFailedError",
    "GenerationOutput",
    "Interrupted",
    "LocalValidationError",
    "MediagenError",
    "MemberLimit",
    "MissingAPIKeyError",
    "ModelInfo",
    "NotFoundError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "SpendLimit",
    "SpendLimitExceededError",
    "SubmitInterrupted",
    "UnexpectedResponseError",
    "UnknownFieldError",
    "UploadTicket",
    "ValidationError",
    "WaitInterrupted",
    "WaitTimeoutError",
    "budget",
]


def __getattr__(name: str) -> Any:
    home = _HOME_OF.get(name)
    if home is not None:
        return getattr(import_module(f"{__name__}.{home}"), name)
    if name.startswith("_"):  # a submodule not loaded yet: the import system loads it
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from mediagen.client._errors import DEPRECATED_NAMES, deprecated_name

    if name in DEPRECATED_NAMES:
        return deprecated_name(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, loaded or not, beside what the package holds already."""
    return sorted(set(__all__) | set(vars(sys.modules[__name__])))

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

from typing import TYPE_CHECKING, Any

from mediagen._lazy import lazy_exports

if TYPE_CHECKING:
    from mediagen.client._budget import (
        Budget as Budget,
        SpendLimit as SpendLimit,
        SpendLimitExceededError as SpendLimitExceededError,
        budget as budget,
    )
    from mediagen.client._clients import (
        AsyncClient as AsyncClient,
        BatchItem as BatchItem,
        BatchResult as BatchResult,
        Client as Client,
        Generation as Generation,
        GenerationOutput as GenerationOutput,
    )
    from mediagen.client._config import MissingAPIKeyError as MissingAPIKeyError
    from mediagen.client._errors import (
        APIConnectionError as APIConnectionError,
        APIError as APIError,
        APITimeoutError as APITimeoutError,
        AuthenticationError as AuthenticationError,
        BadRequestError as BadRequestError,
        BudgetExceededError as BudgetExceededError,
        ConflictError as ConflictError,
        GenerationFailedError as GenerationFailedError,
        Interrupted as Interrupted,
        LocalValidationError as LocalValidationError,
        MediagenError as MediagenError,
        NotFoundError as NotFoundError,
        PaymentRequiredError as PaymentRequiredError,
        PermissionDeniedError as PermissionDeniedError,
        RateLimitError as RateLimitError,
        ServerError as ServerError,
        SubmitInterrupted as SubmitInterrupted,
        UnexpectedResponseError as UnexpectedResponseError,
        UnknownFieldError as UnknownFieldError,
        ValidationError as ValidationError,
        WaitInterrupted as WaitInterrupted,
        WaitTimeoutError as WaitTimeoutError,
    )
    from mediagen.client._models import (
        Asset as Asset,
        Credits as Credits,
        Estimate as Estimate,
        GenerationErrorInfo as GenerationErrorInfo,
        MemberLimit as MemberLimit,
        ModelInfo as ModelInfo,
        RateStatus as RateStatus,
        UploadTicket as UploadTicket,
    )
    from mediagen.client._transport import DownloadError as DownloadError

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
        "RateStatus",
        "UploadTicket",
    ),
}
#: every public name, from the table above (the imports above are what type checkers read)
__all__ = sorted(name for names in _HOMES.values() for name in names)


def _deprecated(name: str) -> Any:
    from mediagen.client._errors import DEPRECATED_NAMES, deprecated_name

    if name in DEPRECATED_NAMES:
        return deprecated_name(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__getattr__, __dir__ = lazy_exports(
    __name__,
    {name: f".{module}" for module, names in _HOMES.items() for name in names},
    missing=_deprecated,
)

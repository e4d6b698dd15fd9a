"""The wire client: ``Client`` (blocking) and ``AsyncClient`` over one sans-I/O core.

Operations are written once as generators of effects (``_effects``); requests are built and
responses parsed by pure functions (``_requests``); the retry policy is pure (``_retry``).
``Client`` and ``AsyncClient`` only perform the effects. Every name the spec leaves open lives
in ``_wire``. Nothing here imports pandas, ipywidgets or IPython.
"""

from __future__ import annotations

from mediagen.client._batch import BatchItem, BatchResult
from mediagen.client._budget import Budget, SpendLimit, SpendLimitExceededError, budget
from mediagen.client._config import MissingAPIKeyError
from mediagen.client._download import DownloadError
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
    Generation,
    GenerationErrorInfo,
    GenerationOutput,
    MemberLimit,
    ModelInfo,
    UploadTicket,
)
from mediagen.client._sync import Client

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


def __getattr__(name: str):
    # AsyncClient pulls in asyncio (~60 ms); a blocking script should not pay for it.
    if name == "AsyncClient":
        from mediagen.client._async import AsyncClient

        return AsyncClient
    from mediagen.client._errors import DEPRECATED_NAMES, deprecated_name

    if name in DEPRECATED_NAMES:
        return deprecated_name(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

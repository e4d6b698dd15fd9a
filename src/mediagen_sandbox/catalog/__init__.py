"""The model catalog: what ``GET /v1/models`` serves, and the checks and prices behind submit
and estimate. It does no I/O; it asks the server about assets and generations through
:class:`Lookup`.
"""

from ._model import ASSET_PLACEHOLDER_PREFIX, GENERATION_PLACEHOLDER
from ._registry import get_model, list_models
from ._types import AssetRef, Lookup, Quote, SourceGeneration, ValidatedRequest, ValidationFailed
from ._validate import estimate_from_query, validate_submit

__all__ = [
    "ASSET_PLACEHOLDER_PREFIX",
    "GENERATION_PLACEHOLDER",
    "AssetRef",
    "Lookup",
    "Quote",
    "SourceGeneration",
    "ValidatedRequest",
    "ValidationFailed",
    "estimate_from_query",
    "get_model",
    "list_models",
    "validate_submit",
]

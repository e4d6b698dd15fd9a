"""What a 2xx answer must hold, per endpoint: the spec's required fields.

A success whose body lacks them (an empty object, a list where an object belongs, a generation
with no id or an unknown status) is not a success the client can act on: read as defaults it
would show an empty balance, an id of ``""``, or a job "still pending" that ``wait()`` polls
forever. Such a body raises :class:`UnexpectedResponseError` naming the endpoint and what is wrong.
The API is additive-only, so fields this client does not know are never checked; a status
value it does not know is an error, since the spec fixes the three a generation can have.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from mediagen.client._errors import UnexpectedResponseError
from mediagen.wire import _names as _wire

#: the spec's statuses of a generation (the client acts on each: nothing else can be waited on)
GENERATION_STATUSES = ("pending", "completed", "failed")
#: the spec's required fields of a Generation, and of each of its outputs
GENERATION_REQUIRED = ("id", "type", "status", "model", "prompt", "created_at")
OUTPUT_REQUIRED = ("url",)

Check = Callable[[Any, str, str], Any]


def _object(data: Any, what: str, method: str, path: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        shown = "no body" if data is None else f"a JSON {_json_kind(data)}"
        raise UnexpectedResponseError(f"{what} is {shown}, not an object", method=method, path=path)
    return data


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _missing(data: Mapping[str, Any], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if data.get(name) is None]


def _number(data: Mapping[str, Any], name: str, what: str, method: str, path: str) -> None:
    value = data.get(name)
    if value is None:
        raise UnexpectedResponseError(f"{what} has no {name!r}", method=method, path=path)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UnexpectedResponseError(
            f"{what} has {name!r} = {value!r}, not a number", method=method, path=path
        )


def generation(data: Any, method: str, path: str, what: str = "the answer") -> Any:
    """A Generation: its required fields present, ``id`` a non-empty string, a known status."""
    found = _object(data, what, method, path)
    missing = _missing(found, GENERATION_REQUIRED)
    if missing:
        names = ", ".join(repr(n) for n in missing)
        raise UnexpectedResponseError(
            f"{what} is a generation without its required {names}", method=method, path=path
        )
    if not isinstance(found["id"], str) or not found["id"]:
        raise UnexpectedResponseError(
            f"{what} has the generation id {found['id']!r}, not an id", method=method, path=path
        )
    status = found["status"]
    if status not in GENERATION_STATUSES:
        raise UnexpectedResponseError(
            f"{what} has the unknown status {status!r} for generation {found['id']} (the spec's "
            f"are {', '.join(GENERATION_STATUSES)})",
            method=method,
            path=path,
        )
    outputs = found.get("outputs")
    if outputs is not None and not isinstance(outputs, list):
        raise UnexpectedResponseError(
            f"{what} has outputs that are not a list", method=method, path=path
        )
    for index, output in enumerate(outputs or ()):
        inner = f"output {index} of generation {found['id']}"
        item = _object(output, inner, method, path)
        if _missing(item, OUTPUT_REQUIRED) and not item.get("b64_json"):
            raise UnexpectedResponseError(f"{inner} has no 'url'", method=method, path=path)
    return data


def generation_page(data: Any, method: str, path: str) -> Any:
    """A page of the list: an object whose items (if any) are each a Generation."""
    found = _object(data, "the answer", method, path)
    items = found.get(_wire.LIST_ITEMS)
    if items is None:
        raise UnexpectedResponseError(
            f"the answer has no {_wire.LIST_ITEMS!r}", method=method, path=path
        )
    if not isinstance(items, list):
        raise UnexpectedResponseError(
            f"the answer's {_wire.LIST_ITEMS!r} is not a list", method=method, path=path
        )
    for index, item in enumerate(items):
        generation(item, method, path, what=f"item {index} of the page")
    return data


def credits(data: Any, method: str, path: str) -> Any:
    """The credits: at least the balance the key can spend (docs/wire-contract.md's name)."""
    _number(_object(data, "the answer", method, path), "balance", "the answer", method, path)
    return data


def estimate(data: Any, method: str, path: str) -> Any:
    """A quote: its price after discount is what a budget reserves, so it must be a number
    (a quote without one would let a budgeted submit through unchecked)."""
    found = _object(data, "the answer", method, path)
    for name in ("credits", "credits_after_discount"):
        _number(found, name, "the answer", method, path)
        if found[name] < 0:  # a negative price would open every budget it passes through
            raise UnexpectedResponseError(
                f"the answer has {name!r} = {found[name]!r}, a price below 0 credits",
                method=method,
                path=path,
            )
    return data


def model(data: Any, method: str, path: str, what: str = "the answer") -> Any:
    """A catalog entry: at least its ``id``."""
    found = _object(data, what, method, path)
    if not isinstance(found.get("id"), str) or not found["id"]:
        raise UnexpectedResponseError(
            f"{what} is a model without an 'id'", method=method, path=path
        )
    return data


def model_page(data: Any, method: str, path: str) -> Any:
    found = _object(data, "the answer", method, path)
    items = found.get(_wire.LIST_ITEMS)
    if not isinstance(items, list):
        raise UnexpectedResponseError(
            f"the answer has no {_wire.LIST_ITEMS!r} list", method=method, path=path
        )
    for index, item in enumerate(items):
        model(item, method, path, what=f"item {index} of the list")
    return data


def upload_ticket(data: Any, method: str, path: str) -> Any:
    """A registered upload: its ``asset_id`` and the ``upload_url`` the bytes go to."""
    found = _object(data, "the answer", method, path)
    missing = [n for n in ("asset_id", "upload_url") if not found.get(n)]
    if missing:
        names = ", ".join(repr(n) for n in missing)
        raise UnexpectedResponseError(f"the answer has no {names}", method=method, path=path)
    return data

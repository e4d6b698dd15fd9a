"""Request parsing *after* authentication, and the OpenAPI declarations that go with it.

FastAPI validates declared bodies and query parameters before a handler (and so before the
API-key check) runs; the spec wants 401 for a missing key whatever the body. So `/v1` handlers
authenticate first, then validate the body or query with the pydantic models here. The models
are still declared in ``/openapi.json`` via ``openapi_extra`` (see :func:`body_doc`,
:func:`query_doc`) and :func:`install_component_schemas`.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ValidationError

from .. import limits
from ..errors import field_error, validation_error
from .handlers import summary, validation_details

_REF = "#/components/schemas/{model}"
_DOCUMENTED: list[type[BaseModel]] = []


def _raise(exc: ValidationError, prefix: str) -> None:
    """422 with the first ``limits.ERROR_DETAILS`` problems (a body can hold tens of
    thousands: only these are turned into details)."""
    errors = []
    found = exc.errors(include_url=False, include_context=False, include_input=False)
    for err in found[: limits.ERROR_DETAILS]:
        loc = list(err.get("loc", ()))
        if err.get("type") == "json_invalid":
            loc = []
        errors.append({**err, "loc": [prefix, *loc]})
    details = validation_details(errors)
    raise validation_error(summary(details, len(found)), details, len(found)) from None


def _refuse_many_unknown_keys(model: type[BaseModel], raw: bytes) -> None:
    """422 for a body with more unknown top-level keys than a 422 lists, from a plain parse:
    turning pydantic's tens of thousands of errors into Python objects costs five times as
    long, all of it holding the GIL."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return  # pydantic names the problem (its parser has a nesting limit)
    fields = model.model_fields
    if not isinstance(data, dict) or len(data) <= len(fields) + limits.ERROR_DETAILS:
        return
    unknown = len(data.keys() - fields.keys())
    if unknown > limits.ERROR_DETAILS:
        names = itertools.islice(
            (name for name in data if name not in fields), limits.ERROR_DETAILS
        )
        details = [
            {
                "loc": ["body", name],
                "msg": "Extra inputs are not permitted",
                "type": "extra_forbidden",
            }
            for name in names
        ]
        raise validation_error(summary(details, unknown), details, unknown)


def is_json(content_type: str | None) -> bool:
    """A JSON body: ``application/json``, any ``+json`` type, or no type at all."""
    if content_type is None:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def read_json(request: Request) -> bytes:
    """The raw body of a request that declares JSON; 422 for a ``text/plain``, form or other
    body (refused, not guessed at)."""
    content_type = request.headers.get("content-type")
    if not is_json(content_type):
        raise field_error(
            ["header", "Content-Type"],
            f"the body must be JSON: send Content-Type: application/json (got {content_type})",
            "content_type_invalid",
        )
    return await request.body()


async def read_body(model: type[BaseModel], request: Request, org_id: str) -> BaseModel:
    """The request body as ``model``, parsed in the organization's turn on a worker thread
    (see :func:`read_json` and :func:`parse_body` for the 422s)."""
    raw = await read_json(request)
    return await request.app.state.ctx.turns.run(org_id, parse_body, model, raw)


def parse_body(model: type[BaseModel], raw: bytes) -> BaseModel:
    try:
        return model.model_validate_json(raw or b"null")
    except ValidationError as exc:
        if exc.error_count() > limits.ERROR_DETAILS:
            _refuse_many_unknown_keys(model, raw)  # cheaper than listing every error
        _raise(exc, "body")
        raise  # unreachable


def parse_query(model: type[BaseModel], query: Any) -> BaseModel:
    try:
        return model.model_validate(dict(query))
    except ValidationError as exc:
        _raise(exc, "query")
        raise


def body_doc(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` declaring a required JSON body of ``model``."""
    _DOCUMENTED.append(model)
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": _REF.format(model=model.__name__)}}
            },
        }
    }


def query_doc(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` declaring each field of ``model`` as an optional query parameter."""
    schema = model.model_json_schema(ref_template=_REF)
    params = []
    for name, prop in schema.get("properties", {}).items():
        prop = dict(prop)
        description = prop.pop("description", None)
        prop.pop("default", None)
        prop.pop("title", None)
        entry = {"name": name, "in": "query", "required": False, "schema": prop}
        if description:
            entry["description"] = description
        params.append(entry)
    return {"parameters": params}


def install_component_schemas(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in _DOCUMENTED:
        full = model.model_json_schema(ref_template=_REF)
        for name, sub in full.pop("$defs", {}).items():
            components.setdefault(name, sub)
        components[model.__name__] = full
    return schema

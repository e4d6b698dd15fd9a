"""The FastAPI application factory.

``create_app(ctx)`` wires the routes, the error handlers and the outer ASGI layer
(:mod:`mediagen_sandbox.asgi`) around a :class:`~mediagen_sandbox.context.SandboxContext`.
The job runner is started and stopped with the app's lifespan; pending generations left by a
previous run are re-scheduled at startup.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI

from . import __version__, catalog
from .api import admin, handlers, uploads, v1
from .api.deps import bearer_openapi
from .api.parsing import install_component_schemas
from .asgi import OuterLayer
from .context import SandboxContext
from .errors import ErrorBody, error_responses


class SandboxApp(FastAPI):
    """FastAPI with :class:`OuterLayer` outside Starlette's own middleware stack."""

    ctx: SandboxContext

    def build_middleware_stack(self):
        inner = super().build_middleware_stack()
        ctx = self.state.ctx
        return OuterLayer(inner, ctx.lookup_key, ctx.is_admin_token, ctx.admission)


def create_app(ctx: SandboxContext, *, start_runner: bool = True) -> SandboxApp:
    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if start_runner:
            ctx.runner.start()
            ctx.runner.resume_pending()
        try:
            yield
        finally:
            if start_runner:
                ctx.runner.stop()
            ctx.bodies.stop()

    app = SandboxApp(
        title="Media Generation Service (mediagen sandbox)",
        version="1.0",
        summary=f"mediagen_sandbox {__version__}: a local implementation of the service spec.",
        lifespan=lifespan,
        responses=error_responses(405, 413, 500),
    )
    app.state.ctx = ctx
    handlers.install(app)
    app.include_router(v1.router)
    app.include_router(uploads.router)
    app.include_router(admin.router)
    app.openapi = lambda: _openapi(app)
    return app


def _openapi(app: FastAPI) -> dict:
    """FastAPI's document plus the bearer scheme, the manually parsed request schemas, and
    what lets a generic client (or a fuzzer) walk the API: the catalog's example requests, the
    model ids, and links from a submit to its generation and from the model list to a model."""
    if app.openapi_schema is None:
        schema = FastAPI.openapi(app)
        schema = install_component_schemas(bearer_openapi(schema))
        schema["components"]["schemas"].setdefault("ErrorBody", ErrorBody.model_json_schema())
        paths = schema["paths"]
        _path_parameter(paths, "/v1/generations/{generation_id}", "generation_id",
                        {"type": "string", "format": "uuid"})  # fmt: skip
        model_ids = [m["id"] for m in catalog.list_models(None)]
        for path in ("/v1/models/{model_id}", "/v1/models/{model_id}/estimate"):
            _path_parameter(paths, path, "model_id", {"type": "string", "examples": model_ids})
        generation = {"operationRef": "#/paths/~1v1~1generations~1{generation_id}/get"}
        for kind, path in SUBMIT_PATHS.items():
            operation = paths[path]["post"]
            examples = {
                f"{entry['id']}-{name}": {"value": body}
                for entry in catalog.list_models(kind)
                for name, body in catalog.get_model(entry["id"])["example_request"].items()
            }
            operation["requestBody"]["content"]["application/json"]["examples"] = examples
            operation["responses"]["200"]["links"] = {
                "GetGeneration": {
                    **generation,
                    "parameters": {"generation_id": "$response.body#/id"},
                }
            }
        paths["/v1/models"]["get"]["responses"]["200"]["links"] = {
            "GetFirstModel": {
                "operationRef": "#/paths/~1v1~1models~1{model_id}/get",
                "parameters": {"model_id": "$response.body#/data/0/id"},
            },
            "EstimateFirstModel": {
                "operationRef": "#/paths/~1v1~1models~1{model_id}~1estimate/get",
                "parameters": {"model_id": "$response.body#/data/0/id"},
            },
        }
        app.openapi_schema = schema
    return app.openapi_schema


SUBMIT_PATHS = {"image": "/v1/images", "video": "/v1/videos", "audio": "/v1/audio"}


def _path_parameter(paths: dict, path: str, name: str, schema: dict) -> None:
    for param in paths[path]["get"]["parameters"]:
        if param["name"] == name:
            param["schema"] = schema

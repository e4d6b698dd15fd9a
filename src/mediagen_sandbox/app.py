"""The FastAPI application factory.

``create_app(ctx)`` wires the routes, the error handlers and the outer ASGI layer
(:mod:`mediagen_sandbox.asgi`) around a :class:`~mediagen_sandbox.context.SandboxContext`.
The job runner is started and stopped with the app's lifespan; pending generations left by a
previous run are re-scheduled at startup.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI

from . import __version__
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
        return OuterLayer(inner, self.state.ctx.is_api_key, self.state.ctx.is_admin_token)


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

    app = SandboxApp(
        title="Media Generation Service (mediagen sandbox)",
        version="1.0",
        summary=f"mediagen_sandbox {__version__}: a local implementation of the service spec.",
        lifespan=lifespan,
        responses=error_responses(405, 500),
    )
    app.state.ctx = ctx
    handlers.install(app)
    app.include_router(v1.router)
    app.include_router(uploads.router)
    app.include_router(admin.router)
    app.openapi = lambda: _openapi(app)
    return app


def _openapi(app: FastAPI) -> dict:
    """FastAPI's document plus the bearer scheme and the manually parsed request schemas."""
    if app.openapi_schema is None:
        schema = FastAPI.openapi(app)
        schema = install_component_schemas(bearer_openapi(schema))
        schema["components"]["schemas"].setdefault("ErrorBody", ErrorBody.model_json_schema())
        for param in schema["paths"]["/v1/generations/{generation_id}"]["get"]["parameters"]:
            if param["name"] == "generation_id":
                param["schema"] = {"type": "string", "format": "uuid"}
        app.openapi_schema = schema
    return app.openapi_schema

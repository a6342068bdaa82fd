"""The app factory: no import-time app, settings or engine (STYLE.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.responses import PlainTextResponse, Response

from api.ports import KeyStore, ReadStore
from api.routes import agents, runs


def create_api(
    reads: ReadStore,
    keys: KeyStore,
    *,
    metrics: Callable[[], bytes],
    insecure: bool = False,
) -> FastAPI:
    app = FastAPI(
        title="badge-collector",
        version="0.1.0",
        description="Runs, scores and traces of AI agents, assembled from OTLP spans.",
    )
    app.state.reads = reads
    app.state.keys = keys
    app.state.insecure = insecure
    app.include_router(agents.router)
    app.include_router(runs.router)

    @app.middleware("http")
    async def refuse_nul(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        """No stored text holds NUL and SQL text cannot: say so, rather than 500."""
        if "\x00" in request.url.path or any(
            "\x00" in key or "\x00" in value for key, value in request.query_params.multi_items()
        ):
            return JSONResponse({"detail": "NUL characters are not allowed in the URL"}, 400)
        return await call_next(request)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={503: {"description": "database down"}})
    def readyz() -> Response:
        """The database is reachable."""
        if reads.ready():
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "database unreachable"}, 503)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    def prometheus() -> Response:
        """Prometheus text exposition."""
        return Response(metrics(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app

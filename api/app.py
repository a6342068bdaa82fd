"""The app factory: no import-time app, settings or engine (STYLE.md)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI
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

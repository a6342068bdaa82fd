"""The app factory: no import-time app, settings or engine: importing it has no side effects."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from api import dashboard
from api.auth import KeyChecker
from api.certificate_ports import CertificateDesk, CertificateReads
from api.errors import COMMON_RESPONSES, http_error, validation_failed
from api.head import HeadAsGet
from api.hosts import HostAllowList
from api.ports import AgentWrites, GradeStore, PlanStore, ReadStore, WeightStore
from api.problem_answers import StoreFault, StoreFaults, problem_answered
from api.problems import Problem
from api.read_gate import DEFAULT_READ_LIMITS, ReadGate, ReadLimits
from api.routes import agents, badges, loop, me, runs, screenings
from api.routes import certificates as certificate_routes
from api.routes import grades as grades_route


class RefuseNul:
    """No stored text holds NUL and SQL text cannot: a URL with one is a 400, not a 500.

    Plain ASGI (not BaseHTTPMiddleware): the OTLP/HTTP door shares this app,
    and its request bodies must not be streamed through an extra task.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (
            "\x00" in scope["path"] or b"%00" in scope.get("query_string", b"")
        ):
            response = JSONResponse({"detail": "NUL characters are not allowed in the URL"}, 400)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def create_api(
    reads: ReadStore,
    keys: KeyChecker,
    *,
    weights: WeightStore,
    grades: GradeStore,
    plans: PlanStore,
    agent_writes: AgentWrites,
    certificate_reads: CertificateReads,
    certificates: CertificateDesk,
    metrics: Callable[[], bytes],
    insecure: bool = False,
    routes: Sequence[BaseRoute] = (),
    host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] = (),
    read_limits: ReadLimits = DEFAULT_READ_LIMITS,
    store_fault: StoreFault = lambda exc: None,
    readiness: Callable[[], str | None] | None = None,
) -> FastAPI:
    """The read API and the dashboard; `routes` are served too, before its own
    (the OTLP/HTTP door). Reads go through `reads`; the writes the API offers
    each have their own port (`weights`, `grades`, `plans`, `agent_writes`);
    badges and certificates read `certificate_reads`, and `certificates` signs. `host`
    (the bound address) and `allowed_hosts` are the `Host` names every
    request must use, besides localhost (api.hosts). `read_limits` bound the
    requests answered at once, `routes` and health aside (api.read_gate).
    `store_fault` says which exceptions mean a store cannot answer now, as the
    problem to answer instead (api.problem_answers.StoreFaults); `readiness`
    why the server should get no traffic now, or None (by default: whether
    `reads` is ready).
    """
    app = FastAPI(
        title="badge-collector",
        version="0.1.0",
        description="Runs, scores and traces of AI agents, assembled from OTLP spans.",
        responses=COMMON_RESPONSES,
        # FastAPI's /docs and /redoc load their scripts from CDNs: the
        # dashboard serves its own reference at /docs (api.dashboard.reference).
        docs_url=None,
        redoc_url=None,
        exception_handlers={
            RequestValidationError: validation_failed,
            StarletteHTTPException: http_error,
            Problem: problem_answered,
        },
    )
    app.state.reads = reads
    app.state.keys = keys
    app.state.weights = weights
    app.state.grades = grades
    app.state.plans = plans
    app.state.agent_writes = agent_writes
    app.state.certificate_reads = certificate_reads
    app.state.certificates = certificates
    app.state.insecure = insecure
    app.router.routes[:0] = routes
    app.include_router(certificate_routes.router)
    app.include_router(badges.router)
    app.include_router(agents.router)
    app.include_router(grades_route.router)
    app.include_router(loop.router)
    app.include_router(me.router)
    app.include_router(runs.router)
    app.include_router(screenings.router)
    app.include_router(dashboard.router)
    app.mount("/assets", StaticFiles(directory=dashboard.STATIC), name="assets")

    # The last added runs first: a foreign Host is refused before anything,
    # then HEAD is served as a GET, then a NUL in the URL is refused; a
    # store's failure under any route below (the read gate's key check
    # included) is answered as a problem; reads past the bound wait or are
    # refused.
    exempt = [path for route in routes if (path := getattr(route, "path", None))]
    app.add_middleware(ReadGate, limits=read_limits, keys=keys, exempt=exempt)
    app.add_middleware(StoreFaults, fault=store_fault)
    app.add_middleware(RefuseNul)
    app.add_middleware(HeadAsGet)
    app.add_middleware(HostAllowList, bound=host, allowed=tuple(allowed_hosts))

    # async: answered on the event loop, never waiting for a thread that
    # reads hold (api.read_gate, issue 39: 4.25 s under a flood of reads).
    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    def default_readiness() -> str | None:
        return None if reads.ready() else "the database is unreachable"

    unready = readiness or default_readiness

    @app.get(
        "/readyz",
        tags=["health"],
        responses={503: {"description": "the database cannot be written, or nothing can decode"}},
    )
    def readyz() -> Response:
        """The collector can take exports: its database answers and can be
        written, and a decoder process can decode."""
        reason = unready()
        if reason is None:
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": reason}, 503)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    def prometheus() -> Response:
        """Prometheus text exposition."""
        return Response(metrics(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return app

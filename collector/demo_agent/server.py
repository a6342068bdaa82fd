"""The demo agent over HTTP: the endpoint contract of docs/screening.md, traced.

`POST /run` takes `{task_id, prompt, max_tokens, ...}` and answers
`{output, input_tokens, output_tokens, total_cost_usd, ...}`. The app sits
behind OpenTelemetry's ASGI middleware, which extracts the screener's
`traceparent` and `baggage`: its server span is a child of the screening's
root and the agent's spans are children of that, so they join the screened
run. The round comes from the baggage's `badge.run.id` (`<screening>/<task>/
<round>`), which is how the agent stays deterministic per task and round
(a request without it is round 0), and `badge.screening.id` seeds its
timings.

Spans leave through the SDK's batch processor with a short delay, so they
reach the collector well within the screener's `--settle`, and are flushed
when the server stops (the app's lifespan), so stopping it loses none.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from opentelemetry import baggage
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from collector.demo_agent.agent import DemoAgent
from collector.demo_agent.variants import Variant

SERVICE_NAME: Final = "demo-agent"
EXPORT_DELAY_MS: Final = 200  # the batch processor's; the SDK's default of 5 s outlasts --settle
DEFAULT_MAX_TOKENS: Final = 256


def tracer_provider(collector_url: str, key: str | None, variant: Variant) -> TracerProvider:
    """The agent's own exporter, to the collector with its own (agent) key."""
    resource = Resource.create({"service.name": SERVICE_NAME, "badge.demo.variant": variant.name})
    provider = TracerProvider(resource=resource)
    headers = {"authorization": f"Bearer {key}"} if key else None
    exporter = OTLPSpanExporter(endpoint=f"{collector_url.rstrip('/')}/v1/traces", headers=headers)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=EXPORT_DELAY_MS))
    return provider


def round_of(run_key: object) -> int:
    """The round from `badge.run.id` (the task id may hold '/', the round never does)."""
    _, _, last = str(run_key or "").rpartition("/")
    return int(last) if last.isdigit() else 0


def _problem(detail: str) -> Response:
    return JSONResponse({"detail": detail}, status_code=400)


def build_app(
    variant: Variant, provider: TracerProvider, on_ready: Callable[[], None] | None = None
) -> Any:
    """The ASGI app: Starlette routes behind the OpenTelemetry middleware."""
    agent = DemoAgent(provider.get_tracer("badge-collector.demo-agent"), variant)

    async def run(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _problem("the body must be JSON")
        if not isinstance(body, dict) or not isinstance(body.get("prompt"), str):
            return _problem("expected a JSON object with a string `prompt`")
        task_id = str(baggage.get_baggage("badge.task.id") or body.get("task_id") or "")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
            max_tokens = DEFAULT_MAX_TOKENS
        round_number = round_of(baggage.get_baggage("badge.run.id"))
        screening_id = str(baggage.get_baggage("badge.screening.id") or "")
        # A thread keeps the server answering while one task sleeps; it copies the
        # context, so the agent's spans stay under the request's server span.
        answer = await asyncio.to_thread(
            agent.answer, body["prompt"], task_id, round_number, max_tokens, screening_id
        )
        return JSONResponse(answer.body(variant.name))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if on_ready is not None:
            on_ready()
        yield
        await asyncio.to_thread(provider.shutdown)  # flush what is still batched

    app = Starlette(routes=[Route("/run", run, methods=["POST"])], lifespan=lifespan)
    return OpenTelemetryMiddleware(app, tracer_provider=provider, exclude_spans=["receive", "send"])


def listening_socket(host: str, port: int) -> socket.socket:
    """Bound and listening before uvicorn starts, so the banner can print the real port
    (with --port 0) and a client that reads it can connect at once (the backlog holds it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def serve(host: str, port: int, variant: Variant, collector_url: str, key: str | None) -> int:
    """Answer until SIGINT or SIGTERM; 2 when the port cannot be bound."""
    import uvicorn

    try:
        sock = listening_socket(host, port)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc}", file=sys.stderr)
        return 2
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host

    def ready() -> None:
        print(
            f"demo agent ({variant.name}: {variant.what}) answering POST "
            f"http://{shown}:{bound}/run; its spans go to {collector_url}",
            flush=True,
        )

    app = build_app(variant, tracer_provider(collector_url, key, variant), ready)
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C once it has shut down (spans flushed)
        pass
    return 0

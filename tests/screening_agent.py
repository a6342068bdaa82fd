"""Agents for the screening tests: real OpenTelemetry, real HTTP, nothing mocked.

`agent_app` is a Starlette app behind OpenTelemetry's ASGI middleware, so
the screener's `traceparent` is extracted by the real propagator, and its
LLM and tool spans (GenAI conventions) leave through the real SDK exporter
to the collector, as a deployed agent's would. `misbehaving_app` answers in
every wrong way SCREEN.md section 3 lists. `answer` and `answer_async` are
Python targets for `--target tests.screening_agent:...` (metadata `mode`
`slow` or `raise` makes them misbehave).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from opentelemetry import baggage, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

INPUT_TOKENS, OUTPUT_TOKENS = 40, 12  # per chat call


@dataclass
class Calls:
    """What the agent did, by the run key it read from the baggage."""

    tools: dict[str, int] = field(default_factory=dict)
    chats: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def act(tracer: Tracer, prompt: str, metadata: dict[str, Any], run_key: str, calls: Calls) -> str:
    """One chat call, the task's tools (each an execute_tool span), one more chat call."""
    tools = list(metadata.get("tools", []))
    for index in range(2):
        with tracer.start_as_current_span(
            "chat gpt-test",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-test",
                "gen_ai.usage.input_tokens": INPUT_TOKENS,
                "gen_ai.usage.output_tokens": OUTPUT_TOKENS,
            },
        ):
            pass
        if index == 0:
            for tool in tools:
                with tracer.start_as_current_span(
                    f"execute_tool {tool}",
                    attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool},
                ):
                    time.sleep(0.001)
    with calls.lock:
        calls.tools[run_key] = calls.tools.get(run_key, 0) + len(tools)
        calls.chats[run_key] = calls.chats.get(run_key, 0) + 2
    round_number = int(run_key.rsplit("/", 1)[-1]) if run_key else 0
    if round_number in metadata.get("wrong_in_rounds", []):
        return "I do not know."
    return str(metadata.get("answer", prompt))


def agent_app(collector_url: str, key: str, service: str = "support-backend") -> tuple[Any, Calls]:
    """The endpoint agent: its spans carry its own service name, not the screened agent's."""
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    exporter = OTLPSpanExporter(
        endpoint=f"{collector_url}/v1/traces", headers={"authorization": f"Bearer {key}"}
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("screening-test-agent")
    calls = Calls()

    async def run(request: Request) -> Response:
        body = await request.json()
        run_key = str(baggage.get_baggage("badge.run.id") or "")
        output = await asyncio.to_thread(
            act, tracer, body["prompt"], body.get("metadata") or {}, run_key, calls
        )
        usage = {"input_tokens": 2 * INPUT_TOKENS, "output_tokens": 2 * OUTPUT_TOKENS}
        return JSONResponse({"output": output, **usage, "trace_note": "kept as evidence"})

    app = Starlette(routes=[Route("/run", run, methods=["POST"])])
    return OpenTelemetryMiddleware(app, tracer_provider=provider), calls


def misbehaving_app() -> Any:
    """Answers by the task's metadata `mode`: every error class of SCREEN.md section 3."""

    async def run(request: Request) -> Response:
        body = await request.json()
        mode = (body.get("metadata") or {}).get("mode", "ok")
        if mode == "slow":
            await asyncio.sleep(5)
        if mode == "http_500":
            return JSONResponse({"output": "oops"}, status_code=500)
        if mode == "not_json":
            return PlainTextResponse("<html>hello</html>")
        if mode == "not_object":
            return JSONResponse(["output", "a list"])
        if mode == "no_output":
            return JSONResponse({"answer": "misnamed"})
        if mode == "huge":
            chunk = b'{"output": "' + b"x" * (256 * 1024)

            async def pieces() -> Any:
                for _ in range(16):  # 4 MiB, never closed as JSON
                    yield chunk

            return StreamingResponse(pieces(), media_type="application/json")
        if mode == "bad_counts":
            counts = {"input_tokens": -1, "output_tokens": True, "total_cost_usd": "free"}
            return JSONResponse({"output": "fine", **counts})
        return JSONResponse(
            {"output": "fine", "input_tokens": 7, "output_tokens": 3, "total_cost_usd": 0.002}
        )

    return Starlette(routes=[Route("/run", run, methods=["POST"])])


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app on a free loopback port, in a thread; yields its base URL."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise AssertionError("the test agent did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


# Python targets (`--target tests.screening_agent:answer`): spans through the global provider.
def answer(prompt: str, *, task_id: str, max_tokens: int, metadata: Any) -> Any:
    """A sync target: one tool span per `tools` entry, under the screener's root."""
    tracer = trace.get_tracer("screening-test-target")
    for tool in (metadata or {}).get("tools", []):
        with tracer.start_as_current_span(
            f"execute_tool {tool}", attributes={"gen_ai.operation.name": "execute_tool"}
        ):
            pass
    if (metadata or {}).get("mode") == "slow":
        time.sleep(5)
    if (metadata or {}).get("mode") == "raise":
        raise KeyError(task_id)
    return {"output": (metadata or {}).get("answer", prompt), "input_tokens": max_tokens}


async def answer_async(prompt: str, *, task_id: str, max_tokens: int, metadata: Any) -> str:
    """An async target: the same, awaited; a plain string answer."""
    tracer = trace.get_tracer("screening-test-target")
    for tool in (metadata or {}).get("tools", []):
        with tracer.start_as_current_span(
            f"execute_tool {tool}", attributes={"gen_ai.operation.name": "execute_tool"}
        ):
            await asyncio.sleep(0)
    if (metadata or {}).get("mode") == "slow":
        await asyncio.sleep(5)
    if (metadata or {}).get("mode") == "raise":
        raise ValueError(f"no answer for {task_id}")
    return str((metadata or {}).get("answer", prompt))

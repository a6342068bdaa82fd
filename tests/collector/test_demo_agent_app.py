"""The demo agent's ASGI app in-process: the endpoint contract, the screener's trace context
and baggage read by the real OpenTelemetry middleware and propagators, and bad requests."""

from __future__ import annotations

import asyncio
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracer, SpanKind

from collector.demo_agent.agent import DemoAgent
from collector.demo_agent.server import build_app, tracer_provider
from collector.demo_agent.variants import VARIANTS

TRACE_ID, PARENT = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
PROMPT = "How many days do I have to return a parcel?"


def post(app: Any, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
            if isinstance(body, bytes):
                return await client.post("/run", content=body, headers=headers)
            return await client.post("/run", json=body, headers=headers)

    return asyncio.run(send())


def traced_app(variant: str = "baseline") -> tuple[Any, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return build_app(VARIANTS[variant], provider), exporter


def test_an_answer_continues_the_screeners_trace_and_takes_its_round_from_the_baggage() -> None:
    app, exporter = traced_app("broken")
    headers = {
        "traceparent": f"00-{TRACE_ID}-{PARENT}-01",
        "baggage": "badge.screening.id=s1,badge.task.id=refund-window,"
        "badge.run.id=s1%2Frefund-window%2F2",  # percent-encoded, as the screener sends it
    }
    body = {"task_id": "ignored-when-baggage-names-it", "prompt": PROMPT, "max_tokens": 64}
    reply = post(app, body, headers)
    assert reply.status_code == 200, reply.text
    agent = DemoAgent(NoOpTracer(), VARIANTS["broken"], sleep=lambda _: None)
    assert reply.json() == agent.answer(PROMPT, "refund-window", 2, 64).body("broken")
    assert "14 days" in reply.json()["output"]
    spans: list[ReadableSpan] = list(exporter.get_finished_spans())
    assert {s.context.trace_id for s in spans} == {int(TRACE_ID, 16)}
    [server] = [s for s in spans if s.kind is SpanKind.SERVER]
    assert server.parent is not None and server.parent.span_id == int(PARENT, 16)
    assert [s.name for s in spans if s.parent and s.parent.span_id == server.context.span_id] == [
        "invoke_agent concierge"
    ]  # and no `http receive` / `http send` spans beside it
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert [(s.attributes or {})["gen_ai.request.max_tokens"] for s in chats] == [64, 64]


def test_without_baggage_the_task_comes_from_the_body_and_the_round_is_zero() -> None:
    app, _ = traced_app()
    reply = post(app, {"task_id": "t", "prompt": PROMPT, "max_tokens": True})
    agent = DemoAgent(NoOpTracer(), VARIANTS["baseline"], sleep=lambda _: None)
    assert reply.json() == agent.answer(PROMPT, "t", 0, 256).body("baseline")  # 256: default


def test_a_request_the_contract_does_not_allow_is_a_400() -> None:
    app, _ = traced_app()
    assert post(app, b"{not json", {"content-type": "application/json"}).status_code == 400
    for body in (["a list"], {"prompt": 7}, {"task_id": "no prompt"}):
        reply = post(app, body)
        assert reply.status_code == 400 and "prompt" in reply.json()["detail"]


def test_the_exporter_sends_with_the_agent_key_to_the_collector() -> None:
    """A real export to a loopback server that records what it was sent."""
    seen: list[tuple[str, str | None, int]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers["content-length"])
            seen.append((self.path, self.headers["authorization"], len(self.rfile.read(size))))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Collector) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        provider = tracer_provider(url, "bdg_key", VARIANTS["flaky"])
        provider.get_tracer("t").start_span("invoke_agent concierge").end()
        assert provider.force_flush()
        provider.shutdown()
        server.shutdown()
    assert [(path, key) for path, key, _ in seen] == [("/v1/traces", "Bearer bdg_key")]
    assert provider.resource.attributes["service.name"] == "demo-agent"
    assert provider.resource.attributes["badge.demo.variant"] == "flaky"

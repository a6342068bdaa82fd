"""The MCP server of the pydantic_ai_mcp recording: tools served over stdio by the official MCP
Python SDK (`mcp.server.mcpserver.MCPServer`, mcp 2.x), run by the agent as a separate process.

The MCP SDK has OpenTelemetry built in (its `OpenTelemetryMiddleware` is on by default and uses
the OpenTelemetry API): each request becomes a SERVER span named `tools/call <tool>`, continued
from the W3C `traceparent` the client puts in the request's `params._meta`. What a user adds is
the OpenTelemetry SDK in the server's process, as here: a global `TracerProvider` with a
`BatchSpanProcessor` and the OTLP exporter, configured from the standard environment variables
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_SERVICE_NAME`; gRPC here, so the recording has both
doors: the agent exports over HTTP). The provider is shut down (flushed) when the process exits.

Ground truth: this process cannot reach the recorder's `current()`, so every tool body appends
one JSON line (tool name, error flag, and the trace id of the span it runs under) to the file
named by `BADGE_TRUTH_LOG`; the recorder adds those lines to the run whose trace id they carry.
"""

from __future__ import annotations

import atexit
import json
import os

from mcp.server.mcpserver import MCPServer
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

BATCH = 4


def setup_tracing() -> None:
    """The OTel SDK as a user of the MCP SDK sets it up (endpoint and service from env)."""
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "mcp-tools")})
    provider = TracerProvider(resource=resource)
    exporter = OTLPSpanExporter(insecure=True)  # OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    provider.add_span_processor(
        BatchSpanProcessor(exporter, max_export_batch_size=BATCH, schedule_delay_millis=100)
    )
    trace.set_tracer_provider(provider)
    atexit.register(provider.shutdown)


def truth(tool: str, error: bool = False) -> None:
    """One line per tool body entered (and one more with error=true before it raises)."""
    context = trace.get_current_span().get_span_context()
    line = {"tool": tool, "error": error, "trace_id": f"{context.trace_id:032x}"}
    with open(os.environ["BADGE_TRUTH_LOG"], "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


WEATHER = {"paris": "18C, sunny", "oslo": "4C, rain", "rome": "22C, clear", "tokyo": "15C, cloudy"}
RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("USD", "GBP"): 0.79}
ORDERS = {"A-100": 40, "A-101": 25, "A-102": 10, "A-103": 5}

# log_level CRITICAL: the SDK logs each raising tool with a rich traceback on stderr, which
# the agent process would print; spans are not affected.
server = MCPServer("weather-tools", log_level="CRITICAL")


@server.tool()
def get_weather(city: str) -> str:
    """Current weather of a city."""
    truth("get_weather")
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


@server.tool()
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount between currencies."""
    truth("convert_currency")
    rate = RATES.get((from_currency, to_currency))
    if rate is None:
        truth("convert_currency", error=True)
        raise ValueError(f"unknown currency pair {from_currency}->{to_currency}")
    return f"{amount * rate:.2f} {to_currency}"


@server.tool()
def lookup_order(order_id: str) -> str:
    """An order's total in USD."""
    truth("lookup_order")
    if order_id not in ORDERS:
        truth("lookup_order", error=True)
        raise KeyError(f"no order {order_id}")
    return json.dumps({"order_id": order_id, "total_usd": ORDERS[order_id]})


@server.tool()
def add(a: float, b: float) -> float:
    """a + b"""
    truth("add")
    return a + b


if __name__ == "__main__":
    setup_tracing()
    server.run("stdio")

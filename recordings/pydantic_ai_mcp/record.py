"""Record pydantic-ai (its own OpenTelemetry instrumentation, `Agent.instrument_all()`) with tools
on an MCP server that runs over stdio as a separate process and exports its own spans.

The agent: pydantic-ai `Agent` with `OpenAIChatModel` (the real `openai` AsyncOpenAI client)
pointed at the kit's scripted OpenAI-compatible server (`kit.scripted_openai`), which answers from
a per-run script and counts every model call (ground truth). Its tools come from an
`MCPToolset` over a FastMCP `StdioTransport` that starts `mcp_server.py` (the official MCP Python
SDK's `MCPServer`) as a child process; a few runs add local pydantic-ai function tools.

Spans, in the agent's process (service `pydantic-ai-mcp-agent`, OTLP/HTTP): pydantic-ai's
`invoke_agent` / `chat` / `execute_tool` spans, FastMCP's client span `tools/call <tool>` and the
MCP SDK's `MCP send tools/call <tool>` (both use the global OpenTelemetry tracer provider, so the
script sets one). In the server's process (service `weather-mcp-server`, OTLP/gRPC): the MCP
SDK's SERVER span `tools/call <tool>`, continued from the `traceparent` the client injects into
the request's `params._meta`. One tool call is therefore four spans across two services.

Ground truth for MCP tools is counted in the server's tool bodies (a JSON line per call, with the
trace id it ran under, in a file the recorder reads back); local tools and model calls count in
this process as usual.

Usage: /work/envs/pydantic_ai_mcp/bin/python recordings/pydantic_ai_mcp/record.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastmcp.client.transports import StdioTransport  # noqa: E402
from kit import Recording, current  # noqa: E402
from kit.scripted_openai import ScriptedOpenAI, calls, fail, text  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry import trace  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.mcp import MCPToolset  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

HERE = Path(__file__).resolve().parent
SCENARIO = "pydantic_ai_mcp"
OUT = HERE.parents[1] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE = "pydantic-ai-mcp-agent"
SERVER_SERVICE = "weather-mcp-server"
BATCH = 6
FAKE = ScriptedOpenAI()
TRUTH_LOG = Path(tempfile.gettempdir()) / f"badge-{SCENARIO}-{os.getpid()}.jsonl"

SYSTEM = "You are a concise assistant. Use the tools; answer in one sentence."


def model(name: str = "scripted-gpt") -> OpenAIChatModel:
    # max_retries=0: one model call is one HTTP request (the openai SDK retries 5xx by default and
    # pydantic-ai's chat span wraps the SDK call, so SDK retries would hide inside one span).
    client = AsyncOpenAI(base_url=FAKE.base_url, api_key="sk-fake", max_retries=0)
    return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))


# ---------------------------------------------------------------------------------------------
# Local tools (counted here; MCP tools count in mcp_server.py)
# ---------------------------------------------------------------------------------------------


def multiply(a: float, b: float) -> float:
    """a * b (a local pydantic-ai tool: one execute_tool span, no MCP)."""
    current().tool("multiply")
    return a * b


@dataclass
class Toolbox:
    """The MCP toolsets of the recording, all on one stdio server process."""

    transport: StdioTransport
    mcp: MCPToolset[Any]
    mcp_raising: MCPToolset[Any]


async def ask_weather_expert(question: str) -> str:
    """Ask the weather expert (an agent used as a tool, with the MCP tools)."""
    current().tool("ask_weather_expert")
    expert = Agent(
        model("expert-gpt"),
        name="weather_expert",
        instructions="You are a weather expert. Use get_weather.",
        toolsets=[TOOLBOX.mcp],
    )
    result = await expert.run(question)
    return result.output


TOOLBOX: Toolbox  # set in main()


def agent(local: list[Callable[..., Any]] | None = None, raising: bool = False) -> Agent[None, str]:
    return Agent(
        model(),
        name="assistant",
        instructions=SYSTEM,
        tools=local or [],
        toolsets=[TOOLBOX.mcp_raising if raising else TOOLBOX.mcp],
    )


def run(local: list[Callable[..., Any]] | None = None, raising: bool = False) -> Runner:
    async def go(prompt: str) -> str:
        result = await agent(local, raising).run(prompt)
        return result.output

    return go


async def run_streaming(prompt: str) -> str:
    async with agent().run_stream(prompt) as result:
        return await result.get_output()


Runner = Callable[[str], Awaitable[str]]

# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    task_id: str
    expected: str
    script: dict[str, list[dict[str, Any]]]
    go: Runner
    prompt: str
    notes: str


ORDER_CALLS = [("lookup_order", {"order_id": o}) for o in ("A-100", "A-101", "A-102", "A-103")]

SCENARIOS = [
    Scenario(
        "greet-no-tools",
        "Hello",
        {"scripted-gpt": [text("Hello! How can I help you today?")]},
        run(),
        "Hi there",
        "0 tool calls, 1 model call (the MCP tool list is fetched: tools/list spans, no step)",
    ),
    Scenario(
        "weather-paris",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("It is 18C in Paris.")]},
        run(),
        "What's the weather in Paris?",
        "1 MCP tool call: execute_tool > tools/call (FastMCP client) > MCP send tools/call "
        "(MCP SDK) > tools/call (server process)",
    ),
    Scenario(
        "arith-mcp-then-local",
        "126",
        {
            "scripted-gpt": [
                calls(("add", {"a": 17, "b": 25})),
                calls(("multiply", {"a": 42, "b": 3})),
                text("(17 + 25) * 3 = 126"),
            ]
        },
        run([multiply]),
        "Compute (17 + 25) * 3",
        "2 sequential calls: add on the MCP server (4 spans), multiply local (1 span)",
    ),
    Scenario(
        "weather-parallel",
        "Paris 18C, Oslo 4C, Rome 22C",
        {
            "scripted-gpt": [
                calls(
                    ("get_weather", {"city": "Paris"}),
                    ("get_weather", {"city": "Oslo"}),
                    ("get_weather", {"city": "Rome"}),
                ),
                text("Paris 18C, Oslo 4C, Rome 22C"),
            ]
        },
        run(),
        "Weather in Paris, Oslo and Rome?",
        "3 parallel MCP tool calls in one response (concurrent requests on one stdio session)",
    ),
    Scenario(
        "currency-error-recover",
        "92.00 EUR",
        {
            "scripted-gpt": [
                calls(
                    (
                        "convert_currency",
                        {"amount": 100, "from_currency": "USD", "to_currency": "JPY"},
                    )
                ),
                calls(
                    (
                        "convert_currency",
                        {"amount": 100, "from_currency": "USD", "to_currency": "EUR"},
                    )
                ),
                text("100 USD is 92.00 EUR."),
            ]
        },
        run(),
        "Convert 100 USD to EUR (try JPY first)",
        "the MCP tool raises: the server answers isError, the toolset (tool_error_behavior="
        "'retry') turns it into a retry prompt, the model calls again",
    ),
    Scenario(
        "orders-total-7-tools",
        "80",
        {
            "scripted-gpt": [
                calls(*ORDER_CALLS),
                calls(("add", {"a": 40, "b": 25}), ("add", {"a": 10, "b": 5})),
                calls(("add", {"a": 65, "b": 15})),
                text("The four orders total 80 USD."),
            ]
        },
        run(),
        "Total of orders A-100..A-103?",
        "7 MCP tool calls: 4 parallel, 2 parallel, 1 (28 tool-ish spans)",
    ),
    Scenario(
        "weather-wrong-answer",
        "4C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Oslo"})), text("It is 12C in Oslo.")]},
        run(),
        "Weather in Oslo?",
        "the model misreads the tool result",
    ),
    Scenario(
        "model-outage",
        "18C",
        {"scripted-gpt": [fail(500)]},
        run(),
        "Weather in Paris?",
        "the first model call fails (HTTP 500); ModelHTTPError escapes",
    ),
    Scenario(
        "tool-then-outage",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), fail(503, "unavailable")]},
        run(),
        "Weather in Paris?",
        "1 MCP tool call, then the second model call fails (HTTP 503) and escapes",
    ),
    Scenario(
        "tool-error-escapes",
        "40",
        {"scripted-gpt": [calls(("lookup_order", {"order_id": "Z-999"}))]},
        run(raising=True),
        "Total of order Z-999?",
        "the MCP tool raises; this toolset has tool_error_behavior='error': the exception escapes",
    ),
    Scenario(
        "stream-weather",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("It is 18C in Paris.")]},
        run_streaming,
        "Weather in Paris?",
        "Agent.run_stream: streamed completions with usage, 1 MCP tool call",
    ),
    Scenario(
        "local-and-mcp-parallel",
        "Tokyo 15C, 6",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Tokyo"}), ("multiply", {"a": 2, "b": 3})),
                text("Tokyo 15C, 6"),
            ]
        },
        run([multiply]),
        "Weather in Tokyo, and 2*3?",
        "a local tool and an MCP tool in parallel in one response",
    ),
    Scenario(
        "expert-agent-as-tool",
        "15C",
        {
            "scripted-gpt": [
                calls(("ask_weather_expert", {"question": "Weather in Tokyo?"})),
                text("The expert says Tokyo is 15C."),
            ],
            "expert-gpt": [
                calls(("get_weather", {"city": "Tokyo"})),
                text("Tokyo: 15C, cloudy"),
            ],
        },
        run([ask_weather_expert]),
        "Ask the expert about Tokyo",
        "a local tool that runs another agent, whose MCP tool call nests inside",
    ),
]

PACKAGES = ["pydantic-ai-slim", "mcp", "fastmcp-slim", "openai"]
NOTES = [
    "ONE MCP TOOL CALL = FOUR SPANS, TWO SERVICES (run weather-paris): "
    "`execute_tool get_weather` (INTERNAL, scope `pydantic-ai`, agent service) > "
    "`tools/call get_weather` (CLIENT, scope `fastmcp`, agent service) > "
    "`MCP send tools/call get_weather` (CLIENT, scope `mcp-python-sdk`, agent service) > "
    "`tools/call get_weather` (SERVER, scope `mcp-python-sdk`, service `weather-mcp-server`, "
    "another process, exported over gRPC). Each is the parent of the next; the server span "
    "continues the trace from the traceparent the MCP SDK's send puts in `params._meta`.",
    "Tool markers and names on the four spans: execute_tool: `gen_ai.operation.name` "
    "`execute_tool`, `gen_ai.tool.name` `get_weather`, `gen_ai.tool.call.id` `call_002_0`, "
    '`gen_ai.tool.call.arguments` `{"city":"Paris"}`, `logfire.msg` `running tool: '
    "get_weather`. FastMCP client: `mcp.method.name` `tools/call`, `gen_ai.operation.name` "
    "`execute_tool`, `gen_ai.tool.name`, `fastmcp.component.key` `get_weather`. MCP SDK send: "
    "ONLY `mcp.method.name` `tools/call` and `jsonrpc.request.id` `4`: the tool name is only in "
    "the span name. Server: `mcp.method.name`, `gen_ai.operation.name` `execute_tool`, "
    "`gen_ai.tool.name`, `jsonrpc.request.id` `4` (same as the send), `mcp.protocol.version`. "
    "No call id crosses the MCP boundary (the model's call id is only on execute_tool).",
    "Other MCP spans (no step): per agent run `tools/list` (FastMCP CLIENT) > `MCP send "
    "tools/list` > `tools/list` (SERVER); once per session `MCP send server/discover` > "
    "`server/discover` (SERVER), inside the first run (the stdio server starts lazily there).",
    "A tool error: the server's span ends ERROR with `error.type` `tool_error` (the tool raised, "
    "the result has isError), the FastMCP span ERROR with `error.type` `tool_error`, the SDK's "
    "send span UNSET (no JSON-RPC error), execute_tool ERROR with `pydantic_ai.tool.retry.*` "
    "(tool_error_behavior='retry': the model is asked again) or ERROR and the agent run ERROR "
    "(tool_error_behavior='error': fastmcp ToolError escapes).",
    "pydantic-ai's own spans: `invoke_agent <name>` (INTERNAL, `gen_ai.operation.name` "
    "`invoke_agent`, run totals `gen_ai.aggregated_usage.input_tokens` / `output_tokens`), "
    "`chat <model>` (CLIENT, `gen_ai.operation.name` `chat`, `gen_ai.request.model` / "
    "`gen_ai.response.model` `scripted-gpt`, `gen_ai.usage.input_tokens` / `output_tokens`, the "
    "requested calls also in `gen_ai.output.messages` parts of type `tool_call`), "
    "`execute_tool <tool>` (local tools too: one span, no MCP). No cost attribute.",
    "The MCP Python SDK (mcp 2.3.0) has OpenTelemetry built in, on by default, through the "
    "OTel API: the client's send spans and the server's `OpenTelemetryMiddleware`. FastMCP "
    "(fastmcp-slim 4.2.3, pydantic-ai's MCP client) adds its own CLIENT spans. Both use the "
    "global tracer provider: the agent process sets one; the server process sets its own "
    "(OTLP gRPC, endpoint and service name from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / "
    "OTEL_SERVICE_NAME). opentelemetry-instrumentation-mcp (OpenLLMetry) is not needed and not "
    "used.",
    "Ground truth of MCP tools is counted in the server process (one JSON line per tool body, "
    "with the trace id its span ran under, read back by the recorder): every line matched a run.",
]


def drain_truth(runs_by_trace: dict[str, Any]) -> list[str]:
    """Add the server's tool lines to the runs they ran under; return problems."""
    problems: list[str] = []
    if not TRUTH_LOG.exists():
        return problems
    lines = TRUTH_LOG.read_text(encoding="utf-8").splitlines()
    TRUTH_LOG.write_text("", encoding="utf-8")
    for raw in lines:
        line = json.loads(raw)
        run = runs_by_trace.get(line["trace_id"])
        if run is None:
            problems.append(f"MCP tool {line['tool']} ran under trace {line['trace_id']} (no run)")
            continue
        if line["error"]:
            run.tool_error()
        else:
            run.tool(line["tool"])
    return problems


async def record(rec: Recording) -> list[str]:
    global TOOLBOX
    provider = rec.tracer_provider(service_name=SERVICE, transport="http", batch_size=BATCH)
    trace.set_tracer_provider(provider)  # the MCP SDK and FastMCP use the global provider
    Agent.instrument_all()
    rec.exporters[SERVER_SERVICE] = {
        "protocol": "grpc",
        "compression": "none",
        "exporter": "OTLPSpanExporter (grpc) in the MCP server's process, from "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "batch": {"max_export_batch_size": 4, "schedule_delay_millis": 100},
    }
    transport = StdioTransport(
        command=sys.executable,
        args=[str(HERE / "mcp_server.py")],
        env={
            **os.environ,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"http://{rec.grpc_endpoint}",
            "OTEL_SERVICE_NAME": SERVER_SERVICE,
            "BADGE_TRUTH_LOG": str(TRUTH_LOG),
        },
    )
    TOOLBOX = Toolbox(
        transport=transport,
        mcp=MCPToolset(transport, id="weather"),
        mcp_raising=MCPToolset(transport, id="weather-raising", tool_error_behavior="error"),
    )
    problems: list[str] = []
    runs = {}
    TRUTH_LOG.write_text("", encoding="utf-8")
    for scenario in SCENARIOS:
        FAKE.load(scenario.script)
        with rec.run(provider, scenario.task_id, scenario.expected) as run_truth:
            runs[run_truth.trace_id] = run_truth
            run_truth.notes = scenario.notes
            try:
                out = await scenario.go(scenario.prompt)
            finally:
                problems += drain_truth(runs)
            run_truth.output = out
            run_truth.success = scenario.expected in str(out)
        if left := FAKE.leftovers():
            problems.append(f"{scenario.task_id}: unused scripted answers {left}")
        rec.flush()
    await transport.close()  # the server's stdin closes: it exits and flushes its spans
    problems += drain_truth(runs)
    return problems


def main() -> int:
    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "pydantic-ai (pydantic-ai-slim) Agent, Agent.instrument_all(), OpenAIChatModel against "
            "a scripted OpenAI-compatible server on localhost; tools on an MCP server (the MCP "
            "Python SDK's MCPServer, its built-in OpenTelemetry) run over stdio as a child process "
            "through pydantic-ai's MCPToolset (FastMCP client). Two services: the agent (OTLP/HTTP "
            f"protobuf, BatchSpanProcessor(max_export_batch_size={BATCH})) and the MCP server "
            "(its own OTel SDK, OTLP/gRPC, trace continued from the request's _meta traceparent)."
        ),
    )
    with rec:
        problems = asyncio.run(record(rec))
    FAKE.stop()
    TRUTH_LOG.unlink(missing_ok=True)
    if FAKE.unscripted:
        problems.append(f"model calls with no scripted answer: {FAKE.unscripted}")
    rec.finish(packages=PACKAGES, notes=NOTES + problems)
    for line in problems:
        print("PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

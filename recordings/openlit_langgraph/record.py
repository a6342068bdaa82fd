"""Record a LangGraph ReAct agent instrumented by OpenLIT (`openlit.init`).

The agent is `langgraph.prebuilt.create_react_agent` with langchain-openai's `ChatOpenAI` (a real
openai client, `max_retries=0`) pointed at the scripted OpenAI-compatible server in
fake_openai.py; its tools are plain functions made LangChain tools. OpenLIT instruments what it
finds (langgraph, langchain, openai, httpx ...) and exports over OTLP the way its users set it up:
`openlit.init(otlp_endpoint=<capture server>, application_name=..., disable_metrics=True)`,
which installs its own global SDK TracerProvider with a BatchSpanProcessor(OTLPSpanExporter())
(http/protobuf); `OTEL_BSP_MAX_EXPORT_BATCH_SIZE=6` / `OTEL_BSP_SCHEDULE_DELAY=100` split runs
across requests. The kit's root span is made with that global provider (`rec.run(None, ...)`).

Ground truth is counted in code: tool bodies call `current().tool(...)`; every HTTP request that
reaches the fake server is one model call.

Usage: /work/envs/openlit_langgraph/bin/python recordings/openlit_langgraph/record.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from fake_openai import FakeOpenAI, calls, fail, text  # noqa: E402
from kit import Recording, current  # noqa: E402

SCENARIO = "openlit_langgraph"
OUT = HERE.parents[1] / "tests" / "fixtures" / "recordings" / SCENARIO
BATCH = 6
SERVICE = "langgraph-assistant"
FAKE = FakeOpenAI()

# ---------------------------------------------------------------------------------------------
# Tools (counted in their bodies)
# ---------------------------------------------------------------------------------------------

WEATHER = {"paris": "18C, sunny", "oslo": "4C, rain", "rome": "22C, clear", "tokyo": "15C, cloudy"}
RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("USD", "GBP"): 0.79}
ORDERS = {"A-100": 40, "A-101": 25, "A-102": 10, "A-103": 5}
DOCS = {"refund": "Refunds are issued within 14 days to the original payment method."}


def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city name, e.g. Paris.
    """
    current().tool("get_weather")
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """Convert an amount between two currencies (ISO 4217 codes).

    Args:
        amount: The amount to convert.
        from_currency: Source currency code, e.g. USD.
        to_currency: Target currency code, e.g. EUR.
    """
    current().tool("convert_currency")
    try:
        rate = RATES[(from_currency, to_currency)]
    except KeyError:
        current().tool_error()
        raise ValueError(f"unknown currency pair {from_currency}->{to_currency}") from None
    return f"{amount * rate:.2f} {to_currency}"


def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: First number.
        b: Second number.
    """
    current().tool("add")
    return a + b


def multiply(a: float, b: float) -> float:
    """Multiply two numbers.

    Args:
        a: First number.
        b: Second number.
    """
    current().tool("multiply")
    return a * b


def lookup_order(order_id: str) -> str:
    """Look up an order's total in USD.

    Args:
        order_id: The order id, e.g. A-100.
    """
    current().tool("lookup_order")
    return json.dumps({"order_id": order_id, "total_usd": ORDERS[order_id]})


def search_docs(query: str) -> str:
    """Search the help-center documentation.

    Args:
        query: What to look for.
    """
    current().tool("search_docs")
    return DOCS.get(query.split()[0].lower(), "no match")


def charge_card(order_id: str, amount: float) -> str:
    """Charge the customer's card for an order.

    Args:
        order_id: The order id.
        amount: Amount in USD.
    """
    current().tool("charge_card")
    current().tool_error()
    raise PermissionError(f"card declined for {order_id}")


ALL_TOOLS = [get_weather, convert_currency, add, multiply, lookup_order, search_docs]

# ---------------------------------------------------------------------------------------------
# The LangGraph agent
# ---------------------------------------------------------------------------------------------

PROMPT = "You are a concise assistant. Use the tools; answer in one sentence."


def build_agent(stream: bool = False, strict: bool = False) -> Any:
    """create_react_agent over ChatOpenAI; `strict`: a tool's exception escapes the graph."""
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import ToolNode, create_react_agent

    model = ChatOpenAI(
        model="scripted-gpt",
        base_url=FAKE.base_url,
        api_key="sk-scripted",
        max_retries=0,
        streaming=stream,
        stream_usage=True,
    )
    tools = [tool(f) for f in ALL_TOOLS + [charge_card]]
    node: Any = ToolNode(tools, handle_tool_errors=not strict)
    return create_react_agent(model, node, prompt=PROMPT, name="assistant")


def invoke(stream: bool = False, strict: bool = False) -> Callable[[str], str]:
    def go(prompt: str) -> str:
        agent = build_agent(stream=stream, strict=strict)
        state = agent.invoke({"messages": [("user", prompt)]}, {"recursion_limit": 20})
        return str(state["messages"][-1].content)

    return go


def ainvoke() -> Callable[[str], str]:
    def go(prompt: str) -> str:
        agent = build_agent()

        async def main() -> str:
            state = await agent.ainvoke({"messages": [("user", prompt)]})
            return str(state["messages"][-1].content)

        return asyncio.run(main())

    return go


def stream_updates() -> Callable[[str], str]:
    """agent.stream(stream_mode="values") consumed to the end, as chat UIs do."""

    def go(prompt: str) -> str:
        agent = build_agent(stream=True)
        last: Any = None
        for state in agent.stream({"messages": [("user", prompt)]}, stream_mode="values"):
            last = state
        return str(last["messages"][-1].content)

    return go


@dataclass
class Scenario:
    task_id: str
    expected: str
    script: list[dict[str, Any]]
    go: Callable[[str], str]
    prompt: str
    notes: str


WEATHER3 = calls(
    ("get_weather", {"city": "Paris"}),
    ("get_weather", {"city": "Oslo"}),
    ("get_weather", {"city": "Rome"}),
)
SEVEN = [
    calls(*[("lookup_order", {"order_id": f"A-10{i}"}) for i in range(4)]),
    calls(("add", {"a": 40, "b": 25}), ("add", {"a": 10, "b": 5})),
    calls(("add", {"a": 65, "b": 15})),
    text("The four orders total 80 USD."),
]
EUR_RETRY = [
    calls(("convert_currency", {"amount": 100, "from_currency": "USD", "to_currency": "EURO"})),
    calls(("convert_currency", {"amount": 100, "from_currency": "USD", "to_currency": "EUR"})),
    text("100 USD is 92.00 EUR."),
]

SCENARIOS = [
    Scenario(
        "greet-no-tools",
        "Hello",
        [text("Hello! How can I help you today?")],
        invoke(),
        "Hi there",
        "no tool call",
    ),
    Scenario(
        "weather-paris",
        "18C",
        [calls(("get_weather", {"city": "Paris"})), text("It is 18C and sunny in Paris.")],
        invoke(),
        "What's the weather in Paris?",
        "1 tool call",
    ),
    Scenario(
        "arith-chain",
        "42",
        [
            calls(("add", {"a": 4, "b": 3})),
            calls(("multiply", {"a": 7, "b": 6})),
            text("(4 + 3) * 6 = 42"),
        ],
        invoke(),
        "What is (4 + 3) * 6?",
        "2 sequential tool calls",
    ),
    Scenario(
        "weather-parallel-3",
        "Paris 18C, Oslo 4C, Rome 22C",
        [WEATHER3, text("Paris 18C, Oslo 4C, Rome 22C")],
        invoke(),
        "Weather in Paris, Oslo and Rome?",
        "3 tool calls in one response (ToolNode runs them in parallel threads)",
    ),
    Scenario(
        "currency-error-recover",
        "92.00 EUR",
        EUR_RETRY,
        invoke(),
        "Convert 100 USD to euros",
        "tool raises; ToolNode(handle_tool_errors=True) tells the model, which retries",
    ),
    Scenario(
        "orders-total-7-tools",
        "80",
        SEVEN,
        invoke(),
        "What is the total of orders A-100 to A-103?",
        "7 tool calls: 4 parallel, 2, 1",
    ),
    Scenario(
        "weather-wrong-answer",
        "22C",
        [calls(("get_weather", {"city": "Rome"})), text("It is 12C in Rome.")],
        invoke(),
        "How warm is it in Rome?",
        "1 tool call, model misreads the result: wrong answer",
    ),
    Scenario(
        "model-outage",
        "18C",
        [fail(500)],
        invoke(),
        "What's the weather in Paris?",
        "first model call gets HTTP 500; the openai exception escapes invoke",
    ),
    Scenario(
        "docs-then-outage",
        "14 days",
        [calls(("search_docs", {"query": "refund policy"})), fail(503, "service unavailable")],
        invoke(),
        "How long do refunds take?",
        "1 tool call, then HTTP 503 escapes",
    ),
    Scenario(
        "async-parallel-weather",
        "Paris 18C and Tokyo 15C",
        [
            calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
            text("Paris 18C and Tokyo 15C"),
        ],
        ainvoke(),
        "Weather in Paris and Tokyo?",
        "ainvoke: 2 parallel tool calls",
    ),
    Scenario(
        "stream-orders",
        "65",
        [
            calls(("lookup_order", {"order_id": "A-100"}), ("lookup_order", {"order_id": "A-101"})),
            calls(("add", {"a": 40, "b": 25})),
            text("Orders A-100 and A-101 total 65 USD."),
        ],
        stream_updates(),
        "Total of orders A-100 and A-101?",
        "graph.stream(stream_mode=values) with a streaming ChatOpenAI (SSE): 3 tool calls",
    ),
    Scenario(
        "stream-outage",
        "4C",
        [calls(("get_weather", {"city": "Oslo"})), fail(503, "overloaded")],
        invoke(stream=True),
        "Weather in Oslo?",
        "streaming ChatOpenAI: 1 tool call, then the streamed request gets HTTP 503",
    ),
    Scenario(
        "charge-declined-raises",
        "charged",
        [
            calls(("lookup_order", {"order_id": "A-102"})),
            calls(("charge_card", {"order_id": "A-102", "amount": 10})),
        ],
        invoke(strict=True),
        "Charge order A-102.",
        "ToolNode(handle_tool_errors=False): the tool's exception escapes invoke",
    ),
]

PACKAGES = [
    "openlit",
    "langgraph",
    "langgraph-prebuilt",
    "langchain-core",
    "langchain-openai",
    "openai",
    "httpx",
    "pydantic",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions",
]

NOTES = [
    "Export: openlit.init(otlp_endpoint=<capture server base URL>, application_name="
    "langgraph-assistant, environment=recording, disable_metrics=True): with no SDK provider "
    "set yet, OpenLIT makes its own global TracerProvider (resource service.name = "
    "application_name, deployment.environment, telemetry.sdk.name = openlit) with "
    "BatchSpanProcessor(OTLPSpanExporter()) (http/protobuf, OTEL_EXPORTER_OTLP_ENDPOINT set by "
    "openlit); OTEL_BSP_MAX_EXPORT_BATCH_SIZE=6, OTEL_BSP_SCHEDULE_DELAY=100. The kit's root "
    "span is made with that global provider: every span is in its run's trace under badge.run, "
    "no trace outside a run.",
    "Scopes: openlit.instrumentation.langchain (tool, LLM and per-node agent spans), "
    "openlit.instrumentation.langgraph (graph and node spans), and "
    "opentelemetry.instrumentation.httpx (a `POST` CLIENT span per model request, "
    "http.method / http.status_code / http.url only: OpenLIT turns on the contrib HTTP client "
    "instrumentations). No openlit.instrumentation.openai span appeared: the LangChain `chat` "
    "span is the only LLM span per call (why the OpenAI-client instrumentor stayed silent under "
    "langchain-openai was not investigated). OpenLIT's scopes carry no version.",
    "All GenAI semantic conventions: tool `execute_tool <tool>` (INTERNAL) with "
    "gen_ai.operation.name = execute_tool, gen_ai.tool.name, gen_ai.tool.call.id (`call_005_0`), "
    "gen_ai.tool.type = function, arguments / result; a tool that raised: status ERROR, "
    "error.type, gen_ai.framework.error.message (also when ToolNode reported it to the model).",
    "LLM `chat <model>` (CLIENT, scope langchain) with gen_ai.operation.name = chat, "
    "gen_ai.provider.name = openai, gen_ai.request.model / gen_ai.response.model, "
    "gen_ai.usage.input_tokens / output_tokens (ints), gen_ai.client.token.usage (total), "
    "gen_ai.output.messages (GenAI JSON, tool_call parts), and ALSO gen_ai.tool.name / "
    "gen_ai.tool.call.id / gen_ai.tool.call.arguments of the FIRST tool call the model "
    "requested (a chat span that looks like a tool span to a rule that ignores the operation). "
    "gen_ai.usage.cost = 0 on every call: OpenLIT prices from its own table and reports 0 for a "
    "model it does not know (here the scripted model), so a reported cost of 0 is not 'free'. "
    "A failed call: status ERROR, error.type, no usage, no response model. Streaming "
    "(ChatOpenAI(streaming=True)): the same one span, gen_ai.request.stream = true, "
    "gen_ai.server.time_to_first_token.",
    "Agents: per graph node TWO `invoke_agent agent` spans, one per instrumentation, siblings "
    "(not nested): scope langchain (the chain run: gen_ai.agent.id a UUID, workflow input / "
    "output) with the chat span as its child, and scope langgraph (the node: gen_ai.agent.id = "
    "node name, request / response model, and on success usage and output messages copied "
    "from the call). Graph: `invoke_workflow assistant` (scope langgraph, usage totals) around "
    "everything; `create_agent default` (CLIENT, gen_ai.operation.name = create_agent, once per "
    "run at compile time); the streamed run has `invoke_workflow assistant stream`. A graph that "
    "raised: `invoke_workflow assistant` ERROR with only gen_ai.workflow.name and error.type (NO "
    "gen_ai.operation.name) and the exception event twice.",
    "Async (ainvoke): OpenLIT logs 'Failed to detach context ... was created in a different "
    "Context' twice; the spans are still parented right.",
]


def main() -> int:
    import openlit
    from opentelemetry import trace

    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "LangGraph create_react_agent over langchain-openai ChatOpenAI (real openai client) "
            "against a scripted OpenAI-compatible server on localhost, instrumented by OpenLIT "
            "(openlit.init(otlp_endpoint=...), its own global TracerProvider), OTLP/HTTP "
            f"protobuf, BatchSpanProcessor(max_export_batch_size={BATCH})."
        ),
    )
    problems: list[str] = []
    with rec:
        os.environ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] = str(BATCH)
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
        openlit.init(
            otlp_endpoint=rec.http_endpoint.removesuffix("/v1/traces"),
            application_name=SERVICE,
            environment="recording",
            disable_metrics=True,
        )
        rec.exporters[SERVICE] = {
            "protocol": "http/protobuf",
            "compression": "none",
            "exporter": "OTLPSpanExporter (made by openlit.init from otlp_endpoint)",
            "batch": {"max_export_batch_size": BATCH, "schedule_delay_millis": 100},
        }
        provider: Any = trace.get_tracer_provider()
        for scenario in SCENARIOS:
            FAKE.load({"scripted-gpt": scenario.script})
            with rec.run(None, scenario.task_id, scenario.expected, service_name=SERVICE) as run:
                run.notes = scenario.notes
                out = scenario.go(scenario.prompt)
                run.output = out
                run.success = scenario.expected in str(out)
            if left := FAKE.leftovers():
                problems.append(f"{scenario.task_id}: unused scripted answers {left}")
            provider.force_flush()
        provider.force_flush()
    FAKE.stop()
    if FAKE.unscripted:
        problems.append(f"model calls with no scripted answer: {FAKE.unscripted}")
    rec.finish(packages=PACKAGES, notes=NOTES + problems)
    for line in problems:
        print("PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Record Pydantic Logfire's integrations: the OpenAI Agents SDK and the OpenAI client.

Two services, one Logfire configuration each (the same process, reconfigured in between):
- `logfire-agents`: the OpenAI Agents SDK traced by `logfire.instrument_openai_agents()`
  (with `logfire.instrument_openai()` also on, as Logfire's docs show; the OpenAI client
  integration stays silent inside the SDK's model spans). Models: `OpenAIResponsesModel` (the
  SDK's default, the Responses API) and `OpenAIChatCompletionsModel` (what a non-OpenAI provider
  uses), each a real `AsyncOpenAI` client against the scripted server in fake_openai.py.
- `logfire-tool-loop`: a hand-written tool loop over the plain `OpenAI` client traced by
  `logfire.instrument_openai()` only: the model client is instrumented, the tools are not (in
  some runs the user wraps each tool in a `logfire.span`).

Logfire exports over OTLP to the recording kit's capture server the way Logfire documents for
other backends: `logfire.configure(send_to_logfire=False)` plus the standard
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, which makes logfire add a `BatchSpanProcessor(
OTLPSpanExporter())` (http/protobuf); `OTEL_BSP_MAX_EXPORT_BATCH_SIZE=6` and
`OTEL_BSP_SCHEDULE_DELAY=100` split runs across requests as the other recordings do. Logfire
installs the global tracer provider; the kit's root span `badge.run` is made with it
(`rec.run(None, ...)`), so every span of a run shares the root's trace.

Ground truth is counted in code: user tool bodies call `current().tool(...)` on entry; an agent
used as a tool (`Agent.as_tool`) is counted by a `RunHooks.on_tool_start` hook (its body is the
SDK's); a handoff is counted by `RunHooks.on_handoff` (handoffs are not steps); every HTTP
request that reaches the fake server is one model call.

Usage: /work/envs/logfire_openai_agents/bin/python recordings/logfire_openai_agents/record.py
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

SCENARIO = "logfire_openai_agents"
OUT = HERE.parents[1] / "tests" / "fixtures" / "recordings" / SCENARIO
BATCH = 6
AGENTS_SERVICE = "logfire-agents"
LOOP_SERVICE = "logfire-tool-loop"
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


PLAIN_TOOLS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (get_weather, convert_currency, add, multiply, lookup_order, search_docs)
}

# ---------------------------------------------------------------------------------------------
# The OpenAI Agents SDK
# ---------------------------------------------------------------------------------------------

AGENT_TOOLS = {"ask_weather_agent"}  # agents used as tools: counted by the run hook


def build_agents() -> dict[str, Any]:
    """The SDK agents, each with a real AsyncOpenAI client pointed at the scripted server."""
    from agents import Agent, ModelSettings, function_tool
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=FAKE.base_url, api_key="sk-scripted", max_retries=0)
    tools = {name: function_tool(f) for name, f in PLAIN_TOOLS.items()}
    # failure_error_function=None: the SDK re-raises the tool's exception (it escapes the run).
    strict_charge = function_tool(charge_card, failure_error_function=None)
    settings = ModelSettings(parallel_tool_calls=True, include_usage=True)

    def responses(model: str) -> Any:
        return OpenAIResponsesModel(model=model, openai_client=client)

    def chat(model: str) -> Any:
        return OpenAIChatCompletionsModel(model=model, openai_client=client)

    instructions = "You are a concise assistant. Use the tools; answer in one sentence."
    all_tools = list(tools.values())
    weather = Agent(
        name="weather_agent",
        instructions="Answer weather questions with get_weather.",
        tools=[tools["get_weather"]],
        model=responses("weather-model"),
        model_settings=settings,
    )
    return {
        "client": client,
        "assistant": Agent(
            name="assistant",
            instructions=instructions,
            tools=all_tools,
            model=responses("resp-model"),
            model_settings=settings,
        ),
        "chat-assistant": Agent(
            name="chat-assistant",
            instructions=instructions,
            tools=all_tools,
            model=chat("chat-model"),
            model_settings=settings,
        ),
        "billing": Agent(
            name="billing-agent",
            instructions="Charge orders with charge_card.",
            tools=[tools["lookup_order"], strict_charge],
            model=responses("billing-model"),
            model_settings=settings,
        ),
        "triage": Agent(
            name="triage-agent",
            instructions="Hand weather questions to the weather agent.",
            handoffs=[weather],
            model=responses("triage-model"),
            model_settings=settings,
        ),
        "manager": Agent(
            name="manager-agent",
            instructions="Use your tools; ask the weather agent for weather.",
            tools=[
                weather.as_tool(
                    tool_name="ask_weather_agent",
                    tool_description="Ask the weather agent a question.",
                ),
                tools["multiply"],
            ],
            model=responses("manager-model"),
            model_settings=settings,
        ),
    }


def counting_hooks() -> Any:
    """Run hooks: an agent-as-tool call is one tool call; a handoff is one handoff."""
    from agents import RunHooks

    class Counting(RunHooks):  # type: ignore[misc]
        async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
            if tool.name in AGENT_TOOLS:
                current().tool(tool.name)

        async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
            current().handoff()

    return Counting()


def sdk_run(agent_key: str, stream: bool = False) -> Callable[[dict[str, Any], str], str]:
    """Runner.run (or run_streamed, consumed to the end) of one agent; returns final_output."""

    def go(_agents: dict[str, Any], prompt: str) -> str:
        from agents import Runner

        async def main() -> str:
            # Agents and their AsyncOpenAI client are made per run: a client's connection pool
            # belongs to the event loop it was first used on (one asyncio.run per run).
            built = build_agents()
            agent = built[agent_key]
            try:
                if stream:
                    result = Runner.run_streamed(agent, prompt, hooks=counting_hooks(), max_turns=8)
                    async for _event in result.stream_events():
                        pass
                    return str(result.final_output)
                done = await Runner.run(agent, prompt, hooks=counting_hooks(), max_turns=8)
                return str(done.final_output)
            finally:
                await built["client"].close()

        return asyncio.run(main())

    return go


# ---------------------------------------------------------------------------------------------
# A hand-written tool loop over the plain OpenAI client
# ---------------------------------------------------------------------------------------------


def tool_schema(f: Callable[..., Any]) -> dict[str, Any]:
    """An OpenAI function tool schema from the function's annotations (all parameters required)."""
    kinds = {"str": "string", "float": "number", "int": "integer"}
    params = {
        name: {"type": kinds[str(annotation)]}
        for name, annotation in f.__annotations__.items()
        if name != "return"
    }
    return {
        "type": "function",
        "function": {
            "name": f.__name__,
            "description": (f.__doc__ or "").strip().splitlines()[0],
            "parameters": {"type": "object", "properties": params, "required": list(params)},
        },
    }


def tool_loop(
    names: list[str], stream: bool = False, span_tools: bool = False
) -> Callable[[dict[str, Any], str], str]:
    """The loop a user writes around chat.completions: call tools until the model answers.

    A tool that raises is reported to the model as an error message and the loop goes on.
    `span_tools`: each tool runs inside the user's own `logfire.span` (no GenAI attributes).
    """

    def go(_agents: dict[str, Any], prompt: str) -> str:
        import logfire
        from openai import OpenAI

        client = OpenAI(base_url=FAKE.base_url, api_key="sk-scripted", max_retries=0)
        logfire.instrument_openai(client)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are a concise assistant. Use the tools."},
            {"role": "user", "content": prompt},
        ]
        schemas = [tool_schema(PLAIN_TOOLS[n]) for n in names]
        for _turn in range(8):
            message = _ask(client, messages, schemas, stream)
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message.get("content"))
            for call in message["tool_calls"]:
                name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
                if span_tools:
                    with logfire.span("calling tool {tool}", tool=name, call_id=call["id"]):
                        result = _call_tool(name, args)
                else:
                    result = _call_tool(name, args)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        raise RuntimeError("tool loop: no answer after 8 turns")

    return go


def _call_tool(name: str, args: dict[str, Any]) -> str:
    try:
        return str(PLAIN_TOOLS[name](**args))
    except Exception as exc:  # noqa: BLE001 - the model is told and the loop goes on
        return f"error: {type(exc).__name__}: {exc}"


def _ask(client: Any, messages: list[dict[str, Any]], schemas: list[Any], stream: bool) -> Any:
    """One chat.completions call; the assistant message as a dict (streamed chunks merged)."""
    kwargs: dict[str, Any] = {"model": "loop-model", "messages": messages}
    if schemas:
        kwargs["tools"] = schemas
    if not stream:
        reply = client.chat.completions.create(**kwargs)
        return reply.choices[0].message.model_dump(exclude_none=True)
    content: list[str] = []
    tool_calls: dict[int, dict[str, Any]] = {}
    chunks = client.chat.completions.create(
        **kwargs, stream=True, stream_options={"include_usage": True}
    )
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.delta.content:
                content.append(choice.delta.content)
            for delta in choice.delta.tool_calls or []:
                call = tool_calls.setdefault(
                    delta.index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                call["id"] = delta.id or call["id"]
                if delta.function:
                    call["function"]["name"] += delta.function.name or ""
                    call["function"]["arguments"] += delta.function.arguments or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if tool_calls:
        message["tool_calls"] = [tool_calls[i] for i in sorted(tool_calls)]
    return message


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    task_id: str
    service: str
    expected: str
    script: dict[str, list[dict[str, Any]]]
    go: Callable[[dict[str, Any], str], str]
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
        AGENTS_SERVICE,
        "Hello",
        {"resp-model": [text("Hello! How can I help you today?")]},
        sdk_run("assistant"),
        "Hi there",
        "Responses API model, no tool call",
    ),
    Scenario(
        "weather-paris",
        AGENTS_SERVICE,
        "18C",
        {
            "resp-model": [
                calls(("get_weather", {"city": "Paris"})),
                text("It is 18C and sunny in Paris."),
            ]
        },
        sdk_run("assistant"),
        "What's the weather in Paris?",
        "1 tool call",
    ),
    Scenario(
        "arith-chain",
        AGENTS_SERVICE,
        "42",
        {
            "resp-model": [
                calls(("add", {"a": 4, "b": 3})),
                calls(("multiply", {"a": 7, "b": 6})),
                text("(4 + 3) * 6 = 42"),
            ]
        },
        sdk_run("assistant"),
        "What is (4 + 3) * 6?",
        "2 sequential tool calls",
    ),
    Scenario(
        "weather-parallel-3",
        AGENTS_SERVICE,
        "Paris 18C, Oslo 4C, Rome 22C",
        {"resp-model": [WEATHER3, text("Paris 18C, Oslo 4C, Rome 22C")]},
        sdk_run("assistant"),
        "Weather in Paris, Oslo and Rome?",
        "3 parallel tool calls in one response (the SDK runs them concurrently)",
    ),
    Scenario(
        "currency-error-recover",
        AGENTS_SERVICE,
        "92.00 EUR",
        {"resp-model": EUR_RETRY},
        sdk_run("assistant"),
        "Convert 100 USD to euros",
        "tool raises; the SDK's default failure_error_function tells the model, which retries",
    ),
    Scenario(
        "orders-total-7-tools",
        AGENTS_SERVICE,
        "80",
        {"resp-model": SEVEN},
        sdk_run("assistant"),
        "What is the total of orders A-100 to A-103?",
        "7 tool calls: 4 parallel, 2 parallel, 1",
    ),
    Scenario(
        "weather-wrong-answer",
        AGENTS_SERVICE,
        "22C",
        {"resp-model": [calls(("get_weather", {"city": "Rome"})), text("It is 12C in Rome.")]},
        sdk_run("assistant"),
        "How warm is it in Rome?",
        "1 tool call, model misreads the result: wrong answer",
    ),
    Scenario(
        "model-outage",
        AGENTS_SERVICE,
        "18C",
        {"resp-model": [fail(500)]},
        sdk_run("assistant"),
        "What's the weather in Paris?",
        "first model call gets HTTP 500 (Responses API); the SDK raises",
    ),
    Scenario(
        "docs-then-outage",
        AGENTS_SERVICE,
        "14 days",
        {
            "resp-model": [
                calls(("search_docs", {"query": "refund policy"})),
                fail(503, "service unavailable"),
            ]
        },
        sdk_run("assistant"),
        "How long do refunds take?",
        "1 tool call, then the second model call gets HTTP 503; the SDK raises",
    ),
    Scenario(
        "chat-weather-parallel-2",
        AGENTS_SERVICE,
        "Paris 18C and Tokyo 15C",
        {
            "chat-model": [
                calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
                text("Paris 18C and Tokyo 15C"),
            ]
        },
        sdk_run("chat-assistant"),
        "Weather in Paris and Tokyo?",
        "OpenAIChatCompletionsModel: 2 parallel tool calls",
    ),
    Scenario(
        "chat-error-then-outage",
        AGENTS_SERVICE,
        "92.00 EUR",
        {"chat-model": [EUR_RETRY[0], fail(500)]},
        sdk_run("chat-assistant"),
        "Convert 100 USD to euros",
        "OpenAIChatCompletionsModel: tool raises (recovered), then the model call gets HTTP "
        "500; the SDK raises",
    ),
    Scenario(
        "chat-stream-orders",
        AGENTS_SERVICE,
        "65",
        {
            "chat-model": [
                calls(
                    ("lookup_order", {"order_id": "A-100"}), ("lookup_order", {"order_id": "A-101"})
                ),
                calls(("add", {"a": 40, "b": 25})),
                text("Orders A-100 and A-101 total 65 USD."),
            ]
        },
        sdk_run("chat-assistant", stream=True),
        "Total of orders A-100 and A-101?",
        "Runner.run_streamed with OpenAIChatCompletionsModel (SSE): 3 tool calls",
    ),
    Scenario(
        "handoff-weather",
        AGENTS_SERVICE,
        "4C",
        {
            "triage-model": [calls(("transfer_to_weather_agent", {}))],
            "weather-model": [
                calls(("get_weather", {"city": "Oslo"})),
                text("It is 4C with rain in Oslo."),
            ],
        },
        sdk_run("triage"),
        "Weather in Oslo?",
        "handoff triage -> weather agent (1 handoff, not a step), which uses 1 tool",
    ),
    Scenario(
        "agent-as-tool",
        AGENTS_SERVICE,
        "60",
        {
            "manager-model": [
                calls(
                    ("ask_weather_agent", {"input": "Temperature in Rome?"}),
                    ("multiply", {"a": 3, "b": 20}),
                ),
                text("Rome is 22C, and 3 * 20 = 60."),
            ],
            "weather-model": [calls(("get_weather", {"city": "Rome"})), text("Rome: 22C, clear.")],
        },
        sdk_run("manager"),
        "How warm is Rome, and what is 3 * 20?",
        "Agent.as_tool: the manager calls the weather agent as a tool (1 step) and multiply in "
        "parallel; the weather agent's own get_weather is 1 more step",
    ),
    Scenario(
        "charge-declined-raises",
        AGENTS_SERVICE,
        "charged",
        {
            "billing-model": [
                calls(("lookup_order", {"order_id": "A-102"})),
                calls(("charge_card", {"order_id": "A-102", "amount": 10})),
            ]
        },
        sdk_run("billing"),
        "Charge order A-102.",
        "tool with failure_error_function=None raises: the exception escapes Runner.run",
    ),
    # -- the hand-written loop over logfire.instrument_openai() --------------------------------
    Scenario(
        "loop-greet",
        LOOP_SERVICE,
        "Hello",
        {"loop-model": [text("Hello! What can I do for you?")]},
        tool_loop(["get_weather"]),
        "Hi",
        "hand-written loop, no tool call",
    ),
    Scenario(
        "loop-weather-paris",
        LOOP_SERVICE,
        "18C",
        {
            "loop-model": [
                calls(("get_weather", {"city": "Paris"})),
                text("It is 18C and sunny in Paris."),
            ]
        },
        tool_loop(["get_weather"]),
        "What's the weather in Paris?",
        "hand-written loop, 1 tool call (tools not traced)",
    ),
    Scenario(
        "loop-weather-parallel-3",
        LOOP_SERVICE,
        "Paris 18C, Oslo 4C, Rome 22C",
        {"loop-model": [WEATHER3, text("Paris 18C, Oslo 4C, Rome 22C")]},
        tool_loop(["get_weather"], span_tools=True),
        "Weather in Paris, Oslo and Rome?",
        "hand-written loop, 3 tool calls in one response, each in the user's logfire.span",
    ),
    Scenario(
        "loop-currency-recover",
        LOOP_SERVICE,
        "92.00 EUR",
        {"loop-model": EUR_RETRY},
        tool_loop(["convert_currency"], span_tools=True),
        "Convert 100 USD to euros",
        "hand-written loop: tool raises, the loop tells the model, which retries",
    ),
    Scenario(
        "loop-orders-7-stream",
        LOOP_SERVICE,
        "80",
        {"loop-model": SEVEN},
        tool_loop(["lookup_order", "add"], stream=True),
        "What is the total of orders A-100 to A-103?",
        "hand-written loop, streamed chat completions (SSE, usage in the last chunk), 7 tools",
    ),
    Scenario(
        "loop-wrong-answer",
        LOOP_SERVICE,
        "22C",
        {"loop-model": [calls(("get_weather", {"city": "Rome"})), text("It is 12C in Rome.")]},
        tool_loop(["get_weather"]),
        "How warm is it in Rome?",
        "hand-written loop, 1 tool call, wrong answer",
    ),
    Scenario(
        "loop-outage",
        LOOP_SERVICE,
        "14 days",
        {
            "loop-model": [
                calls(("search_docs", {"query": "refund policy"})),
                fail(500),
            ]
        },
        tool_loop(["search_docs"]),
        "How long do refunds take?",
        "hand-written loop, 1 tool call, then HTTP 500: the openai exception escapes",
    ),
    Scenario(
        "loop-stream-outage",
        LOOP_SERVICE,
        "4C",
        {"loop-model": [calls(("get_weather", {"city": "Oslo"})), fail(503, "overloaded")]},
        tool_loop(["get_weather"], stream=True),
        "Weather in Oslo?",
        "hand-written loop, streamed: 1 tool call, then the streamed request gets HTTP 503",
    ),
]

# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------

PACKAGES = [
    "logfire",
    "logfire-sdk",
    "openai-agents",
    "openai",
    "httpx2",
    "pydantic",
    "opentelemetry-instrumentation",
]

NOTES = [
    "Export: logfire.configure(send_to_logfire=False, console=False, service_name=...) with "
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set: logfire adds BatchSpanProcessor(OTLPSpanExporter()) "
    "(http/protobuf) to its own global tracer provider; OTEL_BSP_MAX_EXPORT_BATCH_SIZE=6, "
    "OTEL_BSP_SCHEDULE_DELAY=100. The kit's root span is made with that global provider (so it "
    "too gets logfire.span_type / logfire.msg). The process reconfigures logfire between the two "
    "services (service.name). Every span is in its run's trace under badge.run; no trace "
    "outside a run.",
    "The Agents SDK's own exporter to OpenAI is removed (agents.set_trace_processors([])); "
    "tracing stays on, so logfire's trace-provider wrapper sees every SDK span.",
    "Ground truth: an agent used as a tool (Agent.as_tool) is one tool call of the caller "
    "(counted in RunHooks.on_tool_start), plus the inner agent's own tool calls; a handoff is "
    "counted apart (RunHooks.on_handoff) and is not a step.",
    "Span NAMES are logfire message templates, not values: `Function: {name}`, `Agent run: "
    "{name!r}`, `Responses API with {gen_ai.request.model!r}`, `Chat completion with "
    "{gen_ai.request.model!r}` (Agents SDK, scope logfire.openai_agents, all INTERNAL); "
    "`Chat Completion with {request_data[model]!r}` (OpenAI client, scope logfire.openai, "
    "CLIENT). The formatted text is in `logfire.msg` (`Function: get_weather`, `Function: "
    "convert_currency failed: Error running tool (non-fatal)`), the template again in "
    "`logfire.msg_template`. Newer Agents SDK span types inline values: `Task: Agent workflow`, "
    "`Turn {turn} for agent assistant`.",
    "Agents SDK tool span `Function: {name}`: tool name only in the bare attribute `name` "
    "(`get_weather`), arguments in `input` (JSON text), result in `output`, `mcp_data`; NO "
    "call id and no gen_ai.operation.name / gen_ai.tool.name; `gen_ai.system = openai` on "
    "every SDK span. A tool that raised and was reported to the model: status ERROR, "
    '`logfire.level_num = 17`, `error` = {"message":"Error running tool (non-fatal)",...}, '
    "no exception event (the SDK redacts the error). A handoff has NO Function span: only "
    "`Handoff: {from_agent} → {to_agent}` (attributes from_agent, to_agent); the next agent's "
    "`Agent run` is a sibling under the Task span. An agent used as a tool: `Function: "
    "ask_weather_agent` with the inner Task / Agent run / model / Function spans nested under it.",
    "Agents SDK model spans: Responses API (OpenAIResponsesModel) `Responses API with "
    "{gen_ai.request.model!r}` carries gen_ai.operation.name = chat, gen_ai.request.model / "
    "gen_ai.response.model, gen_ai.usage.input_tokens / output_tokens (ints), gen_ai.usage.raw, "
    "`usage` (JSON text), `response` (the whole Response as JSON), `events`. A FAILED Responses "
    'call (HTTP 500/503): status ERROR + exception event, `error` JSON, usage = "null" and NO '
    "gen_ai.operation.name (it is set only from the response). Chat Completions "
    "(OpenAIChatCompletionsModel) `Chat completion with {gen_ai.request.model!r}` NEVER has "
    "gen_ai.operation.name (only logfire.tags = [LLM]); it has gen_ai.request/response.model, "
    "gen_ai.usage.* when the call succeeded, `input`/`output`/`request_data`/`usage` JSON. "
    "instrument_openai() stays silent inside these spans (no duplicate per call). No cost "
    "(operation.cost comes from genai-prices, which does not know the scripted model ids).",
    "Agents SDK wrappers: `OpenAI Agents trace: {name}` (the SDK trace, attrs name, "
    "agent_trace_id, group_id) > `Task: <workflow>` (sdk_span_type = task, `usage` JSON with the "
    "run's totals: input_tokens, output_tokens, requests; absent when nothing was used) > "
    "`Agent run: {name!r}` (name, tools, handoffs, output_type; ERROR with `error` JSON when the "
    "run failed) > `Turn {turn} for agent <name>` (sdk_span_type = turn, `usage` JSON of the "
    "turn, which INCLUDES a nested agent-as-tool's usage: never sum turns with calls).",
    "OpenAI client (logfire.instrument_openai, scope logfire.openai): one CLIENT span per "
    "request, gen_ai.operation.name = chat, gen_ai.provider.name / gen_ai.system = openai, "
    "gen_ai.request.model, gen_ai.response.model, gen_ai.usage.*, gen_ai.input.messages, "
    "gen_ai.output.messages (tool_call parts: the requested calls), gen_ai.tool.definitions, "
    'request_data = {"model": ...}. A STREAMED call is TWO sibling spans: the request span '
    "(ends when the response headers arrive; no usage, no output, no response id) and a log "
    "`streaming response from {request_data[model]!r} took {duration:.2f}s` (logfire.span_type "
    "= log, zero duration, parent given as a remote parent: flags 0x300) with the usage, output "
    "messages and gen_ai.operation.name = chat: counting both counts each streamed call twice "
    "(loop-orders-7-stream: 8 LLM-looking spans for 4 calls). A streamed call that fails at the "
    "request has only the request span (ERROR).",
    "Hand-written tool loop: the tools are not traced by any integration; in two runs the "
    "user's own `logfire.span('calling tool {tool}')` (scope `logfire`, attributes tool, "
    "call_id) wraps each tool: no role marker, so the steps can only come from the calls the "
    "model requested (gen_ai.output.messages tool_call parts).",
]


def configure_logfire(service: str) -> None:
    import logfire

    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name=service,
        service_version="1.0.0",
        environment="recording",
    )


def main() -> int:
    import logfire
    from agents import set_trace_processors

    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "Pydantic Logfire: the OpenAI Agents SDK via logfire.instrument_openai_agents() "
            "(Responses and Chat Completions models, handoff, agent as tool, streamed run) and a "
            "hand-written tool loop via logfire.instrument_openai(); real openai clients against "
            "a scripted OpenAI-compatible server on localhost; logfire.configure("
            "send_to_logfire=False) exporting OTLP/HTTP protobuf through "
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, BatchSpanProcessor(max_export_batch_size="
            f"{BATCH})."
        ),
    )
    problems: list[str] = []
    with rec:
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = rec.http_endpoint
        os.environ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] = str(BATCH)
        os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
        info = {
            "protocol": "http/protobuf",
            "compression": "none",
            "exporter": "OTLPSpanExporter (added by logfire.configure from "
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)",
            "batch": {"max_export_batch_size": BATCH, "schedule_delay_millis": 100},
        }
        set_trace_processors([])
        agents: dict[str, Any] = {}
        configured = None
        for scenario in SCENARIOS:
            if configured != scenario.service:
                if configured is not None:
                    logfire.force_flush()
                configure_logfire(scenario.service)
                if scenario.service == AGENTS_SERVICE:
                    logfire.instrument_openai_agents()
                    logfire.instrument_openai()
                rec.exporters[scenario.service] = dict(info)
                configured = scenario.service
            FAKE.load(scenario.script)
            with rec.run(
                None, scenario.task_id, scenario.expected, service_name=scenario.service
            ) as run:
                run.notes = scenario.notes
                out = scenario.go(agents, scenario.prompt)
                run.output = out
                run.success = scenario.expected in str(out)
            if left := FAKE.leftovers():
                problems.append(f"{scenario.task_id}: unused scripted answers {left}")
            logfire.force_flush()
        logfire.force_flush()
    FAKE.stop()
    if FAKE.unscripted:
        problems.append(f"model calls with no scripted answer: {FAKE.unscripted}")
    rec.finish(packages=PACKAGES, notes=NOTES + problems)
    for line in problems:
        print("PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

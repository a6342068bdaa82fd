"""Record a Haystack 3 `Agent` with tools, instrumented by OpenInference's Haystack instrumentor
(`openinference-instrumentation-haystack`), exported over OTLP/HTTP to the capture server.

The model is Haystack's `OpenAIChatGenerator` (the real `openai` client inside) pointed at the
kit's scripted OpenAI-compatible server (`kit.scripted_openai`): it answers from a per-run script
(text, tool calls, parallel tool calls, HTTP 500/503) and counts every model call it answers
(ground truth). Tools are plain functions made Haystack tools with `@tool`; each calls
`current().tool(...)` first thing.

What this recording is for: OpenInference's Haystack instrumentor wraps component `run` methods
only. Haystack 3's `Agent` runs its tools itself (`_run_tool`, a thread pool), not through a
component, so there is NO span per tool call: the tool calls exist only as the calls the model
requested, in the LLM span's `llm.output_messages.<i>.message.tool_calls.<j>.*` attributes.
(Haystack's own `haystack.agent.step.tool` spans go to `haystack.tracing`, whose only backend in
Haystack 3 core is a logging tracer: nothing reaches OpenTelemetry.)

Usage: /work/envs/haystack_openinference/bin/python recordings/haystack_openinference/record.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from haystack import component  # noqa: E402
from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage, StreamingChunk  # noqa: E402
from haystack.tools import ComponentTool, tool  # noqa: E402
from haystack.utils import Secret  # noqa: E402
from kit import Recording, current  # noqa: E402
from kit.scripted_openai import ScriptedOpenAI, calls, fail, text  # noqa: E402
from openinference.instrumentation.haystack import HaystackInstrumentor  # noqa: E402
from opentelemetry import trace  # noqa: E402

SCENARIO = "haystack_openinference"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE = "haystack-assistant"
BATCH = 6
FAKE = ScriptedOpenAI()

# ---------------------------------------------------------------------------------------------
# Tools (counted in their bodies)
# ---------------------------------------------------------------------------------------------

WEATHER = {"paris": "18C, sunny", "oslo": "4C, rain", "rome": "22C, clear", "tokyo": "15C, cloudy"}
RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("USD", "GBP"): 0.79}
ORDERS = {"A-100": 40, "A-101": 25, "A-102": 10, "A-103": 5}


@tool
def get_weather(city: Annotated[str, "the city"]) -> str:
    """Current weather of a city."""
    current().tool("get_weather")
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


@tool
def convert_currency(
    amount: Annotated[float, "amount"],
    from_currency: Annotated[str, "ISO code"],
    to_currency: Annotated[str, "ISO code"],
) -> str:
    """Convert an amount between currencies."""
    current().tool("convert_currency")
    try:
        rate = RATES[(from_currency, to_currency)]
    except KeyError:
        current().tool_error()
        raise ValueError(f"unknown currency pair {from_currency}->{to_currency}") from None
    return f"{amount * rate:.2f} {to_currency}"


@tool
def add(a: Annotated[float, "a"], b: Annotated[float, "b"]) -> float:
    """a + b"""
    current().tool("add")
    return a + b


@tool
def multiply(a: Annotated[float, "a"], b: Annotated[float, "b"]) -> float:
    """a * b"""
    current().tool("multiply")
    return a * b


@tool
def lookup_order(order_id: Annotated[str, "order id"]) -> str:
    """An order's total."""
    current().tool("lookup_order")
    if order_id not in ORDERS:
        current().tool_error()
        raise KeyError(f"no order {order_id}")
    return json.dumps({"order_id": order_id, "total_usd": ORDERS[order_id]})


@tool
def ask_weather_expert(question: Annotated[str, "the question"]) -> str:
    """Ask the weather expert agent (an Agent used as a tool: its own LLM spans nest inside)."""
    current().tool("ask_weather_expert")
    expert = Agent(
        chat_generator=generator("expert-gpt"),
        tools=[get_weather],
        system_prompt="You are a weather expert. Use get_weather.",
    )
    result = expert.run(messages=[ChatMessage.from_user(question)])
    return result["last_message"].text or ""


@component
class CityClock:
    """A Haystack component used as a tool through ComponentTool."""

    @component.output_types(time=str)
    def run(self, city: str) -> dict[str, str]:
        current().tool("city_clock")
        return {"time": {"paris": "09:00", "tokyo": "16:00"}.get(city.lower(), "unknown")}


CITY_CLOCK = ComponentTool(
    component=CityClock(), name="city_clock", description="Local time of a city."
)

# ---------------------------------------------------------------------------------------------
# Agents
# ---------------------------------------------------------------------------------------------

SYSTEM = "You are a concise assistant. Use the tools; answer in one sentence."


def generator(model: str = "scripted-gpt", **kwargs: Any) -> OpenAIChatGenerator:
    # max_retries=0: one model call is one HTTP request (the openai SDK retries 5xx by default and
    # the LLM span wraps the component run, so SDK retries would hide inside one span).
    return OpenAIChatGenerator(
        api_key=Secret.from_token("sk-fake"),
        model=model,
        api_base_url=FAKE.base_url,
        max_retries=0,
        timeout=10,
        **kwargs,
    )


def agent(tools: list[Any], raise_on_failure: bool = False, **gen: Any) -> Agent:
    return Agent(
        chat_generator=generator(**gen),
        tools=tools,
        system_prompt=SYSTEM,
        raise_on_tool_invocation_failure=raise_on_failure,
        max_agent_steps=10,
    )


def answer(result: dict[str, Any]) -> str:
    return result["last_message"].text or ""


def run_sync(tools: list[Any], raise_on_failure: bool = False) -> Callable[[str], str]:
    return lambda prompt: answer(
        agent(tools, raise_on_failure).run(messages=[ChatMessage.from_user(prompt)])
    )


def run_async(tools: list[Any]) -> Callable[[str], str]:
    async def go(prompt: str) -> str:
        result = await agent(tools).run_async(messages=[ChatMessage.from_user(prompt)])
        return answer(result)

    return lambda prompt: asyncio.run(go(prompt))


def run_streaming(prompt: str) -> str:
    chunks: list[StreamingChunk] = []
    gen = generator(
        streaming_callback=chunks.append,
        generation_kwargs={"stream_options": {"include_usage": True}},
    )
    result = Agent(chat_generator=gen, tools=[get_weather], system_prompt=SYSTEM).run(
        messages=[ChatMessage.from_user(prompt)]
    )
    return answer(result)


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    task_id: str
    expected: str
    script: dict[str, list[dict[str, Any]]]
    go: Callable[[str], str]
    prompt: str
    notes: str


ORDER_CALLS = [("lookup_order", {"order_id": o}) for o in ORDERS]

SCENARIOS = [
    Scenario(
        "greet-no-tools",
        "Hello",
        {"scripted-gpt": [text("Hello! How can I help you today?")]},
        run_sync([get_weather]),
        "Hi there",
        "0 tool calls, 1 model call",
    ),
    Scenario(
        "weather-paris",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("It is 18C in Paris.")]},
        run_sync([get_weather]),
        "What's the weather in Paris?",
        "1 tool call",
    ),
    Scenario(
        "arith-chain",
        "126",
        {
            "scripted-gpt": [
                calls(("add", {"a": 17, "b": 25})),
                calls(("multiply", {"a": 42, "b": 3})),
                text("(17 + 25) * 3 = 126"),
            ]
        },
        run_sync([add, multiply]),
        "Compute (17 + 25) * 3",
        "2 sequential tool calls",
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
        run_sync([get_weather]),
        "Weather in Paris, Oslo and Rome?",
        "3 parallel tool calls in one response (Haystack runs them on a thread pool)",
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
        run_sync([convert_currency]),
        "Convert 100 USD to EUR (try JPY first)",
        "the tool raises ValueError; the Agent (raise_on_tool_invocation_failure=False) sends the "
        "error to the model, which retries",
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
        run_sync([lookup_order, add]),
        "Total of orders A-100..A-103?",
        "7 tool calls: 4 parallel, 2 parallel, 1",
    ),
    Scenario(
        "weather-wrong-answer",
        "4C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Oslo"})), text("It is 12C in Oslo.")]},
        run_sync([get_weather]),
        "Weather in Oslo?",
        "the model misreads the tool result",
    ),
    Scenario(
        "model-outage",
        "18C",
        {"scripted-gpt": [fail(500)]},
        run_sync([get_weather]),
        "Weather in Paris?",
        "the first model call fails (HTTP 500); the exception escapes the Agent",
    ),
    Scenario(
        "tool-then-outage",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), fail(503, "unavailable")]},
        run_sync([get_weather]),
        "Weather in Paris?",
        "1 tool call, then the second model call fails (HTTP 503) and escapes",
    ),
    Scenario(
        "tool-error-escapes",
        "40",
        {"scripted-gpt": [calls(("lookup_order", {"order_id": "Z-999"}))]},
        run_sync([lookup_order], raise_on_failure=True),
        "Total of order Z-999?",
        "the tool raises KeyError; raise_on_tool_invocation_failure=True: the exception escapes",
    ),
    Scenario(
        "component-as-tool",
        "09:00",
        {
            "scripted-gpt": [
                calls(("city_clock", {"city": "Paris"}), ("get_weather", {"city": "Paris"})),
                text("In Paris it is 09:00 and 18C."),
            ]
        },
        run_sync([CITY_CLOCK, get_weather]),
        "Time and weather in Paris?",
        "a Haystack component as a tool (ComponentTool): its run gets an OpenInference CHAIN "
        "span (the only span a tool call gets here), beside a function tool (no span)",
    ),
    Scenario(
        "stream-weather",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("It is 18C in Paris.")]},
        run_streaming,
        "Weather in Paris?",
        "streaming_callback set: streamed completions with a usage chunk",
    ),
    Scenario(
        "weather-parallel-async",
        "Tokyo 15C, Rome 22C",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "Rome"})),
                text("Tokyo 15C, Rome 22C"),
            ]
        },
        run_async([get_weather]),
        "Weather in Tokyo and Rome?",
        "Agent.run_async: 2 parallel tool calls run concurrently (the async tool path)",
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
        run_sync([ask_weather_expert]),
        "Ask the expert about Tokyo",
        "an Agent inside a tool: the inner Agent's spans nest in the outer run, its LLM span "
        "requests get_weather",
    ),
]


PACKAGES = [
    "haystack-ai",
    "openinference-instrumentation-haystack",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "openai",
]

NOTES = [
    "NO TOOL SPANS: OpenInference's Haystack instrumentor wraps component run methods only; "
    "Haystack 3's Agent runs its tools itself (`_run_tool`, a thread pool), not through a "
    "component. Haystack's own per-call span `haystack.agent.step.tool` goes to "
    "`haystack.tracing`, whose tracer is a NullTracer in Haystack 3 core (no OpenTelemetry "
    "backend there): nothing reaches OTel. A tool that is a Haystack component (ComponentTool, "
    "run `component-as-tool`) gets a CHAIN span `<Class>.run` (here `CityClock.run`), with "
    '`input.value` `{"city": "Paris"}`: no tool marker, no tool name.',
    "Requested tool calls (the only trace of the tool calls): on the LLM span, "
    "`llm.output_messages.<i>.message.tool_calls.<j>.tool_call.function.name` "
    "(`lookup_order`) and `...tool_call.function.arguments` (JSON text "
    '`{"order_id": "A-100"}`), one <j> per call (parallel calls: j = 0..3 in one '
    "message). NO `tool_call.id` attribute: the call id exists only inside the Python repr in "
    "`output.value` (`ToolCall(tool_name='city_clock', arguments={'city': 'Paris'}, "
    "id='call_022_0', extra=None)`). In every run here the requested calls equal the tool "
    "bodies entered (ground truth).",
    "All spans: kind INTERNAL, scope `openinference.instrumentation.haystack` 0.1.46, role in "
    "`openinference.span.kind`: `Agent.run` / `Agent.run_async` CHAIN, `ChatPromptBuilder.run` "
    "CHAIN (the Agent's system-prompt builder), `OpenAIChatGenerator.run` / `.run_async` LLM. An "
    "Agent run inside a tool is a nested `Agent.run` CHAIN whose LLM spans request their own "
    "calls (run `expert-agent-as-tool`: 2 requested, one per Agent).",
    "LLM spans: model `llm.model_name` (`scripted-gpt`), `llm.provider` `openai`; tokens "
    "`llm.token_count.prompt` / `.completion` / `.total` (ints, e.g. 46 / 51 / 97); no cost "
    "attribute; roles in `llm.input_messages.<i>.message.role` / "
    "`llm.output_messages.<i>.message.role` (`assistant`). Streaming (streaming_callback + "
    "stream_options.include_usage) carries the same attributes and usage.",
    "A failed model call: the LLM span has status ERROR (message `Error code: 500 - ...`) and "
    "an `exception` event, no model name, no tokens; the Agent.run CHAIN span ends ERROR too.",
    "A raising tool: with raise_on_tool_invocation_failure=False (default) the error text goes "
    "back to the model (no span shows it); with True, ToolInvocationError escapes the Agent "
    "(Agent.run ERROR) after the one LLM span that requested the call.",
    "Not recorded (requested calls would not equal tool bodies): a FallbackChatGenerator is "
    "itself an LLM span (OpenInference types any `*Generator` as LLM) around one LLM span per "
    "attempt (failed attempts ERROR), and it repeats the winning attempt's requested calls and "
    "tokens; a model asking for a tool that does not exist (see README).",
]


def main() -> int:
    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "Haystack 3 Agent (haystack-ai) with @tool function tools and OpenAIChatGenerator "
            "against a scripted OpenAI-compatible server on localhost; OpenInference's "
            "HaystackInstrumentor on a global SDK TracerProvider, OTLP/HTTP protobuf, "
            f"BatchSpanProcessor(max_export_batch_size={BATCH})."
        ),
    )
    problems: list[str] = []
    with rec:
        provider = rec.tracer_provider(service_name=SERVICE, transport="http", batch_size=BATCH)
        trace.set_tracer_provider(provider)
        HaystackInstrumentor().instrument(tracer_provider=provider)
        for scenario in SCENARIOS:
            FAKE.load(scenario.script)
            with rec.run(provider, scenario.task_id, scenario.expected) as run:
                run.notes = scenario.notes
                out = scenario.go(scenario.prompt)
                run.output = out
                run.success = scenario.expected in str(out)
            if left := FAKE.leftovers():
                problems.append(f"{scenario.task_id}: unused scripted answers {left}")
            rec.flush()
    FAKE.stop()
    if FAKE.unscripted:
        problems.append(f"model calls with no scripted answer: {FAKE.unscripted}")
    rec.finish(packages=PACKAGES, notes=NOTES + problems)
    for line in problems:
        print("PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

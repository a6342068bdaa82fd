"""A hand-written tool loop on the plain `openai` client, with NO instrumentation of its own:
the tools and the loop make no spans. Only the model client is instrumented, by whichever
OpenAI instrumentation the recorder installs (the OTel contrib `opentelemetry-instrumentation-
openai-v2` in openai_v2_client_only, OpenLLMetry's `opentelemetry-instrumentation-openai` in
openllmetry_client_only, which imports this module). So a run's spans are the root and one span
per model call; the tool calls exist only as the calls the model requested, in those spans.

The model is the real `openai` client (sync, async, streaming) pointed at the kit's scripted
OpenAI-compatible server; tools are plain functions, each calling `current().tool(...)` first.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import openai
from kit import Recording, current
from kit.scripted_openai import ScriptedOpenAI, calls, fail, text
from opentelemetry.sdk.trace import TracerProvider

FAKE = ScriptedOpenAI()
CLIENTS: dict[str, Any] = {}


def client() -> openai.OpenAI:
    # max_retries=0: one model call is one HTTP request (the SDK retries 5xx by default, inside
    # one instrumented call: retries would hide inside one span).
    return CLIENTS.setdefault(
        "sync", openai.OpenAI(base_url=FAKE.base_url, api_key="sk-fake", max_retries=0)
    )


def aclient() -> openai.AsyncOpenAI:
    return CLIENTS.setdefault(
        "async", openai.AsyncOpenAI(base_url=FAKE.base_url, api_key="sk-fake", max_retries=0)
    )


# ---------------------------------------------------------------------------------------------
# Tools (plain functions, counted in their bodies)
# ---------------------------------------------------------------------------------------------

WEATHER = {"paris": "18C, sunny", "oslo": "4C, rain", "rome": "22C, clear", "tokyo": "15C, cloudy"}
RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("USD", "GBP"): 0.79}
ORDERS = {"A-100": 40, "A-101": 25, "A-102": 10, "A-103": 5}


def get_weather(city: str) -> str:
    current().tool("get_weather")
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    current().tool("convert_currency")
    try:
        rate = RATES[(from_currency, to_currency)]
    except KeyError:
        current().tool_error()
        raise ValueError(f"unknown currency pair {from_currency}->{to_currency}") from None
    return f"{amount * rate:.2f} {to_currency}"


def add(a: float, b: float) -> float:
    current().tool("add")
    return a + b


def multiply(a: float, b: float) -> float:
    current().tool("multiply")
    return a * b


def lookup_order(order_id: str) -> str:
    current().tool("lookup_order")
    if order_id not in ORDERS:
        current().tool_error()
        raise KeyError(f"no order {order_id}")
    return json.dumps({"order_id": order_id, "total_usd": ORDERS[order_id]})


def summarize(text: str) -> str:
    """A tool that calls the model itself (one more model call, no tool call)."""
    current().tool("summarize")
    answer = client().chat.completions.create(
        model="summary-gpt", messages=[{"role": "user", "content": f"Summarize: {text}"}]
    )
    return answer.choices[0].message.content or ""


def ask_weather_expert(question: str) -> str:
    """An agent used as a tool: another loop with its own model and tools."""
    current().tool("ask_weather_expert")
    return loop(question, Options(tools=["get_weather"], model="expert-gpt"))


TOOLS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        get_weather,
        convert_currency,
        add,
        multiply,
        lookup_order,
        summarize,
        ask_weather_expert,
    )
}
SCHEMAS = {
    "get_weather": {"city": "string"},
    "convert_currency": {"amount": "number", "from_currency": "string", "to_currency": "string"},
    "add": {"a": "number", "b": "number"},
    "multiply": {"a": "number", "b": "number"},
    "lookup_order": {"order_id": "string"},
    "summarize": {"text": "string"},
    "ask_weather_expert": {"question": "string"},
}


def tool_specs(names: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name} tool",
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": t} for k, t in SCHEMAS[name].items()},
                    "required": list(SCHEMAS[name]),
                },
            },
        }
        for name in names
    ]


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------

SYSTEM = "You are a concise assistant. Use the tools; answer in one sentence."


@dataclass
class Options:
    tools: list[str]
    model: str = "scripted-gpt"
    stream: bool = False
    threads: bool = False  # run one response's tool calls on a thread pool (context copied)
    tool_errors_escape: bool = False  # a raising tool ends the run (no try/except in the loop)
    retry_model_once: bool = False  # the loop retries a failed model call once itself
    max_turns: int = 8


def run_tool(name: str, arguments: str, escape: bool) -> str:
    try:
        return str(TOOLS[name](**json.loads(arguments or "{}")))
    except Exception as exc:  # noqa: BLE001 - the model sees the error and goes on
        if escape:
            raise
        return f"error: {type(exc).__name__}: {exc}"


def complete(opts: Options, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One model call; returns the assistant message as a dict (content, tool_calls)."""
    kwargs: dict[str, Any] = {"model": opts.model, "messages": messages}
    if opts.tools:
        kwargs["tools"] = tool_specs(opts.tools)
    if not opts.stream:
        message = client().chat.completions.create(**kwargs).choices[0].message
        return message.model_dump(exclude_none=True)
    stream = client().chat.completions.create(
        **kwargs, stream=True, stream_options={"include_usage": True}
    )
    content, tool_calls = "", {}
    for chunk in stream:
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            for call in delta.tool_calls or []:
                slot = tool_calls.setdefault(call.index, {"id": call.id, "type": "function"})
                slot["function"] = {
                    "name": call.function.name,
                    "arguments": call.function.arguments,
                }
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if tool_calls:
        message["tool_calls"] = [tool_calls[i] for i in sorted(tool_calls)]
    return message


def loop(prompt: str, opts: Options) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt},
    ]
    for _ in range(opts.max_turns):
        try:
            message = complete(opts, messages)
        except openai.APIStatusError:
            if not opts.retry_model_once:
                raise
            opts.retry_model_once = False
            message = complete(opts, messages)
        calls_ = message.get("tool_calls") or []
        if not calls_:
            return (message.get("content") or "").strip()
        messages.append(message)
        fns = [(c["function"]["name"], c["function"]["arguments"]) for c in calls_]
        if opts.threads and len(fns) > 1:
            with ThreadPoolExecutor(max_workers=4) as pool:
                futures = [
                    pool.submit(
                        contextvars.copy_context().run, run_tool, n, a, opts.tool_errors_escape
                    )
                    for n, a in fns
                ]
                results = [f.result() for f in futures]
        else:
            results = [run_tool(n, a, opts.tool_errors_escape) for n, a in fns]
        for call, result in zip(calls_, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise RuntimeError("agent gave up: too many turns")


async def aget_weather(city: str) -> str:
    current().tool("get_weather")
    await asyncio.sleep(0.01)
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


async def aloop(prompt: str) -> str:
    """The async loop: AsyncOpenAI, one response's tool calls run concurrently (asyncio.gather)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt},
    ]
    for _ in range(8):
        answer = await aclient().chat.completions.create(
            model="scripted-gpt", messages=messages, tools=tool_specs(["get_weather"])
        )
        message = answer.choices[0].message.model_dump(exclude_none=True)
        calls_ = message.get("tool_calls") or []
        if not calls_:
            return (message.get("content") or "").strip()
        messages.append(message)
        results = await asyncio.gather(
            *(aget_weather(**json.loads(c["function"]["arguments"])) for c in calls_)
        )
        for call, result in zip(calls_, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise RuntimeError("agent gave up: too many turns")


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


def agent(**kwargs: Any) -> Callable[[str], str]:
    return lambda prompt: loop(prompt, Options(**kwargs))


SCENARIOS = [
    Scenario(
        "greet-no-tools",
        "Hello",
        {"scripted-gpt": [text("Hello! How can I help you today?")]},
        agent(tools=["get_weather"]),
        "Hi there",
        "0 tool calls, 1 model call",
    ),
    Scenario(
        "weather-paris",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("It is 18C in Paris.")]},
        agent(tools=["get_weather"]),
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
        agent(tools=["add", "multiply"]),
        "Compute (17 + 25) * 3",
        "2 sequential tool calls",
    ),
    Scenario(
        "weather-parallel-async",
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
        lambda prompt: asyncio.run(aloop(prompt)),
        "Weather in Paris, Oslo and Rome?",
        "3 parallel tool calls in one response, run concurrently (AsyncOpenAI, asyncio.gather)",
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
        agent(tools=["convert_currency"]),
        "Convert 100 USD to EUR (try JPY first)",
        "the tool raises ValueError, the loop sends the error to the model, which retries",
    ),
    Scenario(
        "orders-total-7-tools",
        "80",
        {
            "scripted-gpt": [
                calls(*(("lookup_order", {"order_id": o}) for o in ORDERS)),
                calls(("add", {"a": 40, "b": 25}), ("add", {"a": 10, "b": 5})),
                calls(("add", {"a": 65, "b": 15})),
                text("The four orders total 80 USD."),
            ]
        },
        agent(tools=["lookup_order", "add"], threads=True),
        "Total of orders A-100..A-103?",
        "7 tool calls: 4 parallel, 2 parallel (thread pool), 1",
    ),
    Scenario(
        "weather-wrong-answer",
        "4C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Oslo"})), text("It is 12C in Oslo.")]},
        agent(tools=["get_weather"]),
        "Weather in Oslo?",
        "the model misreads the tool result",
    ),
    Scenario(
        "model-outage",
        "18C",
        {"scripted-gpt": [fail(500)]},
        agent(tools=["get_weather"]),
        "Weather in Paris?",
        "the first model call fails (HTTP 500); the exception escapes",
    ),
    Scenario(
        "tool-then-outage",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), fail(503, "unavailable")]},
        agent(tools=["get_weather"]),
        "Weather in Paris?",
        "1 tool call, then the second model call fails (HTTP 503) and escapes",
    ),
    Scenario(
        "tool-error-escapes",
        "40",
        {"scripted-gpt": [calls(("lookup_order", {"order_id": "Z-999"}))]},
        agent(tools=["lookup_order"], tool_errors_escape=True),
        "Total of order Z-999?",
        "the tool raises KeyError, the loop does not catch it",
    ),
    Scenario(
        "model-error-retried",
        "18C",
        {
            "scripted-gpt": [
                fail(500),
                calls(("get_weather", {"city": "Paris"})),
                text("It is 18C in Paris."),
            ]
        },
        agent(tools=["get_weather"], retry_model_once=True),
        "Weather in Paris?",
        "first call HTTP 500; the loop retries it itself (3 model calls, 1 failed)",
    ),
    Scenario(
        "stream-weather",
        "18C",
        {"scripted-gpt": [calls(("get_weather", {"city": "Paris"})), text("It is 18C in Paris.")]},
        agent(tools=["get_weather"], stream=True),
        "Weather in Paris?",
        "streamed completions (stream_options.include_usage), the tool call arrives in deltas",
    ),
    Scenario(
        "summary-tool-calls-model",
        "refund",
        {
            "scripted-gpt": [
                calls(("summarize", {"text": "Refunds are issued within 14 days."})),
                text("Summary: refund within 14 days."),
            ],
            "summary-gpt": [text("A refund takes up to 14 days.")],
        },
        agent(tools=["summarize"]),
        "Summarize the refund policy",
        "the summarize tool calls the model itself: 3 model calls, 1 tool call",
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
        agent(tools=["ask_weather_expert"]),
        "Ask the expert about Tokyo",
        "an agent used as a tool: its own loop and model; 2 tool calls requested in 2 models' "
        "answers",
    ),
]


def run_all(rec: Recording, provider: TracerProvider) -> list[str]:
    """Every scenario as one run under `provider`; returns the problems found (unused or missing
    scripted answers)."""
    problems: list[str] = []
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
    if FAKE.unscripted:
        problems.append(f"model calls with no scripted answer: {FAKE.unscripted}")
    return problems

"""Record MLflow Tracing: `mlflow.openai.autolog()` + `@mlflow.trace(span_type=...)` tools in a
hand-written agent loop, exported by MLflow's own OTLP export.

The model is the real `openai` client (sync, async, streaming) pointed at the kit's scripted
OpenAI-compatible server (`kit.scripted_openai`): it answers from a per-run script (text, tool
calls, parallel tool calls, HTTP 500/503) and counts every model call it answers (ground truth).
Tools are plain functions decorated with `@mlflow.trace(span_type=SpanType.TOOL)`; each calls
`current().tool(...)` first thing. The agent loop is written by hand, as MLflow's docs show it:
`@mlflow.trace(span_type=SpanType.AGENT)` around a loop of `client.chat.completions.create(...)`.

Export: MLflow's OTLP export, configured the way MLflow documents it: the env variable
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (MLflow then replaces its own tracking export by an
`OtelSpanProcessor` with the OTLP exporter; its default protocol is gRPC). To put MLflow's spans
in the trace of the kit's root span `badge.run` (made by another instrumentation), the script
runs MLflow in its "unified" mode: `MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false`, a global SDK
`TracerProvider` set before MLflow initialises (MLflow adds its processor to it), and
`mlflow.tracing.enable()` before the first run (see README: without it the first MLflow span of
the process is lost and its children become traces of their own).

Usage: /work/envs/mlflow_tracing/bin/python recordings/mlflow_tracing/record.py
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import sys
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import mlflow  # noqa: E402
import openai  # noqa: E402
from kit import Recording, current  # noqa: E402
from kit.scripted_openai import ScriptedOpenAI, calls, fail, text  # noqa: E402
from mlflow.entities import SpanType  # noqa: E402

SCENARIO = "mlflow_tracing"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE = "mlflow-assistant"
BATCH = 6  # OTEL_BSP_MAX_EXPORT_BATCH_SIZE for MLflow's OtelSpanProcessor (a BatchSpanProcessor)
FAKE = ScriptedOpenAI()
CLIENTS: dict[str, Any] = {}


def client() -> openai.OpenAI:
    # max_retries=0: one model call is one HTTP request (the SDK retries 5xx by default; MLflow's
    # autolog span wraps the SDK call, so retries would hide inside one span: see README).
    return CLIENTS.setdefault(
        "sync", openai.OpenAI(base_url=FAKE.base_url, api_key="sk-fake", max_retries=0)
    )


def aclient() -> openai.AsyncOpenAI:
    return CLIENTS.setdefault(
        "async", openai.AsyncOpenAI(base_url=FAKE.base_url, api_key="sk-fake", max_retries=0)
    )


# ---------------------------------------------------------------------------------------------
# Tools (counted in their bodies)
# ---------------------------------------------------------------------------------------------

WEATHER = {"paris": "18C, sunny", "oslo": "4C, rain", "rome": "22C, clear", "tokyo": "15C, cloudy"}
RATES = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.09, ("USD", "GBP"): 0.79}
ORDERS = {"A-100": 40, "A-101": 25, "A-102": 10, "A-103": 5}
DOCS = {"refund": "Refunds are issued within 14 days to the original payment method."}


@mlflow.trace(span_type=SpanType.TOOL)
def get_weather(city: str) -> str:
    current().tool("get_weather")
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


@mlflow.trace(span_type=SpanType.TOOL)
def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    current().tool("convert_currency")
    try:
        rate = RATES[(from_currency, to_currency)]
    except KeyError:
        current().tool_error()
        raise ValueError(f"unknown currency pair {from_currency}->{to_currency}") from None
    return f"{amount * rate:.2f} {to_currency}"


@mlflow.trace(span_type=SpanType.TOOL)
def add(a: float, b: float) -> float:
    current().tool("add")
    return a + b


@mlflow.trace(span_type=SpanType.TOOL)
def multiply(a: float, b: float) -> float:
    current().tool("multiply")
    return a * b


@mlflow.trace(span_type=SpanType.TOOL)
def lookup_order(order_id: str) -> str:
    current().tool("lookup_order")
    if order_id not in ORDERS:
        current().tool_error()
        raise KeyError(f"no order {order_id}")
    return json.dumps({"order_id": order_id, "total_usd": ORDERS[order_id]})


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(query: str) -> list[str]:
    """A retriever inside a tool: embeds the query (an embeddings call, not an LLM call)."""
    client().embeddings.create(model="scripted-embed", input=query)
    return [DOCS.get(query.split()[0].lower(), "no match")]


@mlflow.trace(span_type=SpanType.TOOL)
def search_docs(query: str) -> str:
    current().tool("search_docs")
    return retrieve(query)[0]


@mlflow.trace(span_type=SpanType.TOOL)
def summarize(text: str) -> str:
    """A tool that calls the model itself: an LLM span nested in a TOOL span."""
    current().tool("summarize")
    answer = client().chat.completions.create(
        model="summary-gpt", messages=[{"role": "user", "content": f"Summarize: {text}"}]
    )
    return answer.choices[0].message.content or ""


@mlflow.trace(span_type=SpanType.TOOL)
def ask_weather_expert(question: str) -> str:
    """An agent used as a tool: the TOOL span holds a whole AGENT span with its own tools."""
    current().tool("ask_weather_expert")
    return weather_expert(question)


@mlflow.trace(span_type=SpanType.LLM, name="local_llm")
def local_llm(prompt: str) -> str:
    """A model MLflow has no autolog for, traced by hand: usage and cost set as MLflow documents
    for manual LLM spans (`mlflow.chat.tokenUsage`, `mlflow.llm.cost`, `mlflow.llm.model`)."""
    request = urllib.request.Request(
        f"{FAKE.base_url}/chat/completions",
        data=json.dumps(
            {"model": "local-model", "messages": [{"role": "user", "content": prompt}]}
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as raw:  # raises on HTTP errors
        body = json.loads(raw.read())
    usage = body["usage"]
    span = mlflow.get_current_active_span()
    span.set_attribute("mlflow.llm.model", "local-model")
    span.set_attribute(
        "mlflow.chat.tokenUsage",
        {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
            "total_tokens": usage["total_tokens"],
        },
    )
    input_cost = usage["prompt_tokens"] * 1e-7
    output_cost = usage["completion_tokens"] * 4e-7
    span.set_attribute(
        "mlflow.llm.cost",
        {
            "input_cost": input_cost,
            "output_cost": output_cost,
            "total_cost": input_cost + output_cost,
        },
    )
    return body["choices"][0]["message"]["content"]


@mlflow.trace(span_type=SpanType.PARSER)
def final_answer(content: str | None) -> str:
    return (content or "").strip()


TOOLS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        get_weather,
        convert_currency,
        add,
        multiply,
        lookup_order,
        search_docs,
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
    "search_docs": {"query": "string"},
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
# The hand-written agent loop
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
    if name not in TOOLS:
        return f"error: unknown tool {name}"
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
            return final_answer(message.get("content"))
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


@mlflow.trace(span_type=SpanType.AGENT, name="assistant")
def assistant(prompt: str, opts: Options) -> str:
    return loop(prompt, opts)


@mlflow.trace(span_type=SpanType.AGENT, name="weather_expert")
def weather_expert(question: str) -> str:
    return loop(question, Options(tools=["get_weather"], model="expert-gpt"))


async def arun_tool(name: str, arguments: str) -> str:
    try:
        return str(await ASYNC_TOOLS[name](**json.loads(arguments or "{}")))
    except Exception as exc:  # noqa: BLE001
        return f"error: {type(exc).__name__}: {exc}"


@mlflow.trace(span_type=SpanType.TOOL, name="get_weather")
async def aget_weather(city: str) -> str:
    current().tool("get_weather")
    await asyncio.sleep(0.01)
    return f"{city}: {WEATHER.get(city.lower(), 'unknown')}"


ASYNC_TOOLS = {"get_weather": aget_weather}


@mlflow.trace(span_type=SpanType.AGENT, name="assistant")
async def aassistant(prompt: str) -> str:
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
            return final_answer(message.get("content"))
        messages.append(message)
        results = await asyncio.gather(
            *(arun_tool(c["function"]["name"], c["function"]["arguments"]) for c in calls_)
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
    return lambda prompt: assistant(prompt, Options(**kwargs))


def manual_llm_agent(prompt: str) -> str:
    @mlflow.trace(span_type=SpanType.AGENT, name="local_assistant")
    def local_assistant(question: str) -> str:
        draft = local_llm(question)
        weather = get_weather("Oslo")
        return local_llm(f"{draft} {weather}")

    return local_assistant(prompt)


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
        lambda prompt: asyncio.run(aassistant(prompt)),
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
        "7 tool calls: 4 parallel, 2 parallel (thread pool, context copied), 1",
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
        "the first model call gets HTTP 500; openai raises, the exception escapes",
    ),
    Scenario(
        "docs-then-outage",
        "14 days",
        {
            "scripted-gpt": [
                calls(("search_docs", {"query": "refund policy"})),
                fail(503, "service unavailable"),
            ]
        },
        agent(tools=["search_docs"]),
        "How long do refunds take?",
        "1 tool (RETRIEVER span and an EMBEDDING call inside it), then HTTP 503 escapes",
    ),
    Scenario(
        "tool-error-escapes",
        "40",
        {"scripted-gpt": [calls(("lookup_order", {"order_id": "B-999"}))]},
        agent(tools=["lookup_order"], tool_errors_escape=True),
        "Total of order B-999?",
        "the tool raises KeyError and the loop does not catch it: the exception escapes",
    ),
    Scenario(
        "model-error-retried",
        "22C",
        {
            "scripted-gpt": [
                fail(500),
                calls(("get_weather", {"city": "Rome"})),
                text("Rome: 22C and clear."),
            ]
        },
        agent(tools=["get_weather"], retry_model_once=True),
        "Weather in Rome?",
        "first model call HTTP 500, the loop retries it itself (2 LLM spans, 1 ERROR), "
        "then goes on",
    ),
    Scenario(
        "stream-weather",
        "15C",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Tokyo"})),
                text("Tokyo is 15C and cloudy."),
            ]
        },
        agent(tools=["get_weather"], stream=True),
        "Weather in Tokyo?",
        "streamed completions (stream_options.include_usage)",
    ),
    Scenario(
        "docs-summary-nested-llm",
        "14 days",
        {
            "scripted-gpt": [
                calls(("search_docs", {"query": "refund"})),
                calls(("summarize", {"text": DOCS["refund"]})),
                text("Refunds take 14 days."),
            ],
            "summary-gpt": [text("Refunds: within 14 days, original payment method.")],
        },
        agent(tools=["search_docs", "summarize"]),
        "Summarize the refund policy",
        "the summarize tool calls the model itself (LLM span inside the TOOL span)",
    ),
    Scenario(
        "expert-agent-as-tool",
        "4C",
        {
            "scripted-gpt": [
                calls(("ask_weather_expert", {"question": "Weather in Oslo?"})),
                text("The expert says Oslo is 4C with rain."),
            ],
            "expert-gpt": [calls(("get_weather", {"city": "Oslo"})), text("Oslo: 4C, rain.")],
        },
        agent(tools=["ask_weather_expert"]),
        "Ask the expert about Oslo",
        "an agent used as a tool: TOOL span > AGENT span > its own LLM and TOOL spans",
    ),
    Scenario(
        "unknown-tool-requested",
        "18C",
        {
            "scripted-gpt": [
                calls(("get_forecast", {"city": "Paris"})),
                calls(("get_weather", {"city": "Paris"})),
                text("Paris is 18C."),
            ]
        },
        agent(tools=["get_weather"]),
        "Weather in Paris?",
        "the model requests a tool that does not exist (no span, not a step), then the right one",
    ),
    Scenario(
        "manual-llm-spans",
        "4C",
        {"local-model": [text("Checking Oslo."), text("Oslo is 4C with rain.")]},
        manual_llm_agent,
        "Weather in Oslo?",
        "a model without autolog, traced by hand: span_type=LLM with mlflow.chat.tokenUsage and "
        "mlflow.llm.cost set on the span",
    ),
]


# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------

PACKAGES = ["mlflow-skinny", "openai", "pydantic"]

NOTES = [
    "Export: MLflow's own OTLP export (env OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; MLflow's default "
    "protocol is gRPC, so this recording came through the gRPC door) via MLflow's "
    "OtelSpanProcessor (a BatchSpanProcessor; batch size from OTEL_BSP_MAX_EXPORT_BATCH_SIZE=6).",
    "Same trace as the root: MLflow runs by default on an isolated tracer provider and context, "
    "so its spans would start traces of their own. With MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false "
    "and a global SDK TracerProvider set first, MLflow adds its OtelSpanProcessor to that provider "
    "and uses the global OTel context: its spans are children of the current OTel span "
    "(badge.run). MLflow also exports the other instrumentation's spans (the root) and stamps "
    "them with `mlflow.traceRequestId` and `mlflow.spanType` = `null` (JSON null as text).",
    "MLflow 3.18 quirk: in that mode the FIRST @mlflow.trace span of the process is a "
    "NonRecordingSpan (never exported) and its children become parentless traces of their own, "
    "unless tracing is initialised first: the script calls mlflow.tracing.enable() before the "
    "first run.",
    "All MLflow spans: kind INTERNAL, scope `mlflow.tracing.provider`; the role only in "
    '`mlflow.spanType`, a JSON string literal (raw value `"TOOL"` with the quotes; also '
    '`"CHAT_MODEL"`, `"LLM"`, `"AGENT"`, `"RETRIEVER"`, `"EMBEDDING"`, `"PARSER"`). Every '
    "mlflow.* value is JSON text (strings quoted).",
    "Model calls (autolog): span `Completions` (`AsyncCompletions` for AsyncOpenAI), "
    '`"CHAT_MODEL"`, '
    'model in `mlflow.llm.model` (`"scripted-gpt"`) and in the bare request-kwarg attribute '
    "`model`; tokens only in `mlflow.chat.tokenUsage` (JSON text "
    '`{"input_tokens": 30, "output_tokens": 27, "total_tokens": 57}`). A failed call: status '
    "ERROR + exception event, no mlflow.llm.model and no usage (only the bare `model`).",
    "Tools: span name = function name (or name= of the decorator), `mlflow.spanFunctionName` "
    '(`"get_weather"`); no tool-call id anywhere on MLflow tool spans. A raising tool: status '
    "ERROR + exception event.",
    'Embeddings (`client.embeddings.create`): span `Embeddings`, `"EMBEDDING"`, model in '
    "mlflow.llm.model, no token usage: not an LLM call in the ground truth (not counted as a "
    "model call by the scripted server).",
    "Streaming: one span per streamed call, with one `mlflow.chunk.item.N` event per chunk; "
    "tokens from the usage chunk (stream_options.include_usage).",
    "Status: MLflow spans end OK (or ERROR with an `exception` event and the message); "
    "`mlflow.spanLogLevel` is `20` / `40` (numbers as JSON text too).",
    "Cost: not on autolog spans when exporting over OTLP (MLflow computes `mlflow.llm.cost` "
    "client-side only for Databricks/SageMaker tracking, else in its own server); the manual LLM "
    'run sets it: JSON text `{"input_cost": ..., "output_cost": ..., "total_cost": ...}`.',
    "No span per retry: the autolog span wraps the openai SDK call, so SDK retries (max_retries "
    "> 0) happen inside one span; the script uses max_retries=0 (one call = one request) and "
    "does the retry of `model-error-retried` in the loop (two spans).",
    "Parallel tools on a thread pool need contextvars.copy_context() (as in orders-total-7-tools): "
    "without it MLflow's spans in the pool threads start traces of their own.",
]


def configure(rec: Recording) -> None:
    """MLflow's OTLP export into the capture server, unified with the global OTel provider."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = f"http://{rec.grpc_endpoint}"
    os.environ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] = str(BATCH)
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
    os.environ["MLFLOW_USE_DEFAULT_TRACER_PROVIDER"] = "false"
    provider = TracerProvider(resource=Resource.create({"service.name": SERVICE}))
    trace.set_tracer_provider(provider)
    rec.providers.append(provider)  # the kit flushes and shuts it down
    rec.exporters[SERVICE] = {
        "protocol": "grpc",
        "compression": "none",
        "exporter": "mlflow OtelSpanProcessor + OTLPSpanExporter (grpc), from "
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "batch": {"max_export_batch_size": BATCH, "schedule_delay_millis": 100},
    }
    mlflow.tracing.enable()
    mlflow.openai.autolog()


def main() -> int:
    FAKE.start()
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "MLflow Tracing (mlflow-skinny): mlflow.openai.autolog() on the real openai client "
            "(sync, async, streaming) against a scripted OpenAI-compatible server on localhost, "
            "@mlflow.trace(span_type=TOOL/AGENT/RETRIEVER/PARSER/LLM) functions in a hand-written "
            "agent loop; MLflow's own OTLP export (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, gRPC), "
            "unified with the global OTel TracerProvider "
            "(MLFLOW_USE_DEFAULT_TRACER_PROVIDER=false)."
        ),
    )
    problems: list[str] = []
    with rec:
        configure(rec)
        for scenario in SCENARIOS:
            FAKE.load(scenario.script)
            with rec.run(None, scenario.task_id, scenario.expected) as run:
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

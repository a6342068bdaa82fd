"""Record AutoGen AgentChat (autogen-agentchat, -core, -ext) with its native OpenTelemetry tracing.

Setup as AutoGen's "Tracing and Observability" guide documents it: a global SDK TracerProvider
(AutoGen's `create_agent` / `invoke_agent` / `execute_tool` GenAI spans and its runtime's
messaging spans use the global provider) plus `OpenAIInstrumentor` (opentelemetry-instrumentation-
openai) for the model calls. The model is autogen-ext's real `OpenAIChatCompletionClient` over the
real `openai` SDK, whose HTTP client has a scripted in-process transport (`httpx2.MockTransport`):
no network. Each model client has its own reply queue per run; the transport answers like the
OpenAI Chat Completions API (tool_calls, finish_reason, usage; SSE chunks with a final usage chunk
when streaming) and counts every request as one model call with the usage it reports.

Run: /work/envs/autogen_agentchat/bin/python recordings/autogen_agentchat/record.py (cwd /work/main)
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # /work/main/recordings
from kit import Recording, current  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.instrumentation.openai import OpenAIInstrumentor  # noqa: E402

SCENARIO = "autogen_agentchat"
OUT = Path(__file__).resolve().parents[2] / "tests/fixtures/recordings" / SCENARIO
SERVICE = "autogen-helpdesk"
BATCH = 6
MODEL = "gpt-4o-mini"
RESPONSE_MODEL = "gpt-4o-mini-2024-07-18"

# ---------------------------------------------------------------------------------------------
# The scripted model: replies per model client ("label"), served through the real openai SDK.


@dataclass
class Say:
    """An assistant text reply (finish_reason stop)."""

    text: str


@dataclass
class Call:
    """One assistant message with one or more tool calls (several = parallel tool calls).

    Each call is (function name, arguments). `handoffs` names the calls that pass control to
    another agent (Swarm `transfer_to_*` handoff tools): the fake model counts those as handoffs,
    not tool steps, when it emits them. An AgentTool call is not a handoff: it is one tool call of
    the calling agent (counted by `CountedAgentTool` when it runs).
    """

    calls: list[tuple[str, dict[str, Any]]]
    handoffs: tuple[str, ...] = ()


@dataclass
class Fail:
    """The provider answers an HTTP error (the openai SDK raises; max_retries=0)."""

    status: int = 500
    message: str = "The server had an error while processing your request."


Reply = Say | Call | Fail


@dataclass
class ScriptedOpenAI:
    """In-process stand-in for the Chat Completions endpoint, one reply queue per client label."""

    queues: dict[str, list[Reply]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    counter: int = 0

    def load(self, script: dict[str, list[Reply]]) -> None:
        self.queues = {label: list(replies) for label, replies in script.items()}

    def leftovers(self) -> dict[str, int]:
        return {label: len(q) for label, q in self.queues.items() if q}

    @staticmethod
    def usage_in(body: dict[str, Any]) -> int:
        """Deterministic prompt token count, from the request size (like a tokenizer would)."""
        return (
            30
            + len(json.dumps(body.get("messages", []))) // 4
            + len(json.dumps(body.get("tools", []))) // 10
        )

    def handle(self, label: str, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        queue = self.queues.get(label)
        if not queue:
            self.problems.append(f"{label}: no scripted reply left")
            return httpx2.Response(
                400,
                json={"error": {"message": "script exhausted", "type": "invalid_request_error"}},
            )
        reply = queue.pop(0)
        self.counter += 1
        completion_id = f"chatcmpl-scripted{self.counter:04d}"
        if isinstance(reply, Fail):
            current().llm_error()
            return httpx2.Response(
                reply.status,
                json={
                    "error": {
                        "message": reply.message,
                        "type": "server_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        input_tokens = self.usage_in(body)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if isinstance(reply, Say):
            message["content"] = reply.text
            finish = "stop"
            output_tokens = 4 + len(reply.text) // 4
        else:
            tool_calls = []
            output_tokens = 0
            for i, (name, args) in enumerate(reply.calls):
                arguments = json.dumps(args)
                tool_calls.append(
                    {
                        "id": f"call_{self.counter:04d}_{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                )
                output_tokens += 9 + len(arguments) // 4
                if name in reply.handoffs:
                    current().handoff()
            message["tool_calls"] = tool_calls
            finish = "tool_calls"
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if stream and not include_usage:
            current().llm(0, 0)  # a streamed call without include_usage reports no usage
        else:
            current().llm(input_tokens, output_tokens)
        usage = {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        }
        if not stream:
            return httpx2.Response(
                200,
                json={
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": RESPONSE_MODEL,
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                    ],
                    "usage": usage,
                    "system_fingerprint": "fp_scripted",
                },
            )
        return self.sse(completion_id, message, finish, usage if include_usage else None)

    @staticmethod
    def sse(
        completion_id: str, message: dict[str, Any], finish: str, usage: dict[str, int] | None
    ) -> httpx2.Response:
        """The same reply as Server-Sent Events chunks, as the API streams it."""
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> str:
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": RESPONSE_MODEL,
                "system_fingerprint": "fp_scripted",
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
                ],
                **extra,
            }
            return f"data: {json.dumps(payload)}\n\n"

        events = [chunk({"role": "assistant", "content": ""})]
        if message.get("content"):
            text = message["content"]
            for start in range(0, len(text), 12):
                events.append(chunk({"content": text[start : start + 12]}))
        for i, call in enumerate(message.get("tool_calls") or []):
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["function"]["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {"index": i, "function": {"arguments": call["function"]["arguments"]}}
                        ]
                    }
                )
            )
        events.append(chunk({}, finish))
        if usage is not None:
            events.append(
                "data: "
                + json.dumps(
                    {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": RESPONSE_MODEL,
                        "system_fingerprint": "fp_scripted",
                        "choices": [],
                        "usage": usage,
                    }
                )
                + "\n\n"
            )
        events.append("data: [DONE]\n\n")
        return httpx2.Response(
            200, content="".join(events).encode(), headers={"content-type": "text/event-stream"}
        )


BACKEND = ScriptedOpenAI()


def model_client(
    label: str, *, parallel_tool_calls: bool | None = None, stream_usage: bool = False
) -> Any:
    """autogen-ext's real OpenAIChatCompletionClient; its openai SDK talks to BACKEND in-process."""
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    kwargs: dict[str, Any] = {}
    if parallel_tool_calls is not None:
        kwargs["parallel_tool_calls"] = parallel_tool_calls
    if stream_usage:
        kwargs["stream_options"] = {"include_usage": True}
    transport = httpx2.MockTransport(functools.partial(BACKEND.handle, label))
    return OpenAIChatCompletionClient(
        model=MODEL,
        api_key="sk-offline-scripted",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=transport),
        **kwargs,
    )


# ---------------------------------------------------------------------------------------------
# Tools: ground truth is counted in their bodies.

TEMPERATURES = {"paris": 18, "london": 12, "tokyo": 24, "nassau": 29, "oslo": 3}
ORDERS = {42: "blue kettle, 39.90 EUR, delivered", 7: "desk lamp, 24.00 EUR, damaged in transit"}
DOCS = {
    "otlp ports": "OTLP/HTTP listens on 4318, OTLP/gRPC on 4317.",
    "badge count": "The collector awarded 42 badges last week.",
    "retention": "Runs are kept for 30 days by default.",
}


async def get_weather(city: str) -> str:
    """Current temperature in Celsius for a city."""
    current().tool("get_weather")
    temp = TEMPERATURES.get(city.lower())
    if temp is None:
        current().tool_error()
        raise ValueError(f"unknown city: {city!r}")
    await asyncio.sleep(0.003)
    return f"{city}: {temp}C"


async def add(a: int, b: int) -> int:
    """Add two integers."""
    current().tool("add")
    await asyncio.sleep(0.001)
    return a + b


async def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    current().tool("multiply")
    await asyncio.sleep(0.001)
    return a * b


async def lookup_order(order_id: int) -> str:
    """Look an order up by id."""
    current().tool("lookup_order")
    await asyncio.sleep(0.002)
    return ORDERS.get(order_id, "no such order")


async def refund_order(order_id: int) -> str:
    """Refund an order."""
    current().tool("refund_order")
    await asyncio.sleep(0.002)
    return f"refund issued for order {order_id}"


async def search_docs(query: str) -> str:
    """Search the product documentation."""
    current().tool("search_docs")
    await asyncio.sleep(0.002)
    return DOCS.get(query.lower(), "no match")


def counted_agent_tool(agent: Any) -> Any:
    """An `AgentTool` (agent as a tool) that counts itself as one tool call when it runs.

    The outer agent's model calls the tool, the tool runs the inner agent and its result goes back
    to the outer agent: one tool call of the outer agent (by the tool's name, the inner agent's
    name), plus the inner agent's own tool calls, which count themselves.
    """
    from autogen_agentchat.tools import AgentTool

    class CountedAgentTool(AgentTool):
        async def run(self, args: Any, cancellation_token: Any) -> Any:
            current().tool(self.name)
            try:
                return await super().run(args, cancellation_token)
            except Exception:
                current().tool_error()
                raise

        async def run_stream(self, args: Any, cancellation_token: Any) -> Any:
            current().tool(self.name)
            try:
                async for event in super().run_stream(args, cancellation_token):
                    yield event
            except Exception:
                current().tool_error()
                raise

    return CountedAgentTool(agent)


# ---------------------------------------------------------------------------------------------
# Agents and teams.


def assistant(name: str, tools: list[Any] | None = None, **kwargs: Any) -> Any:
    from autogen_agentchat.agents import AssistantAgent

    client_kwargs = kwargs.pop("client_kwargs", {})
    return AssistantAgent(
        name,
        model_client=model_client(kwargs.pop("label", name), **client_kwargs),
        tools=tools,
        system_message=kwargs.pop("system_message", f"You are {name}. Use your tools. Be brief."),
        **kwargs,
    )


def final_text(result: Any, source: str | None = None) -> str:
    """The content of the last text message (from `source` when given) of a TaskResult."""
    for message in reversed(result.messages):
        if source is not None and getattr(message, "source", None) != source:
            continue
        content = getattr(message, "content", None)
        if isinstance(content, str):
            return content
    return ""


@dataclass
class Task:
    task_id: str
    prompt: str
    expected: str
    kind: str  # which agent / team runs it
    script: dict[str, list[Reply]]
    notes: str = ""


TASKS: list[Task] = [
    Task(
        "greet-no-tools",
        "Say hi and tell me what 2+2 is.",
        "4",
        "calc",
        {"calc": [Say("Hello! 2 + 2 = 4")]},
        "0 tool calls: one model call answers directly",
    ),
    Task(
        "weather-paris",
        "What's the weather in Paris?",
        "18C",
        "weather",
        {
            "weather": [
                Call([("get_weather", {"city": "Paris"})]),
                Say("It is 18C in Paris right now."),
            ]
        },
        "1 tool call; the agent has a ListMemory (memory query adds no span)",
    ),
    Task(
        "arith-chain-3",
        "Compute (2 + 3) * 4 + 7 with your tools.",
        "27",
        "calc",
        {
            "calc": [
                Call([("add", {"a": 2, "b": 3})]),
                Call([("multiply", {"a": 5, "b": 4})]),
                Call([("add", {"a": 20, "b": 7})]),
                Say("(2 + 3) * 4 + 7 = 27"),
            ]
        },
        "3 sequential tool calls over 3 model turns (max_tool_iterations loop)",
    ),
    Task(
        "weather-parallel-3",
        "Which is warmest now: Paris, London or Tokyo?",
        "Tokyo",
        "weather",
        {
            "weather": [
                Call(
                    [
                        ("get_weather", {"city": "Paris"}),
                        ("get_weather", {"city": "London"}),
                        ("get_weather", {"city": "Tokyo"}),
                    ]
                ),
                Say("Tokyo is the warmest at 24C."),
            ]
        },
        "3 parallel tool calls in one model response",
    ),
    Task(
        "weather-error-recover",
        "Weather in Atlantis? If unknown, use Nassau.",
        "29C",
        "weather",
        {
            "weather": [
                Call([("get_weather", {"city": "Atlantis"})]),
                Call([("get_weather", {"city": "Nassau"})]),
                Say("Atlantis is unknown; Nassau has 29C."),
            ]
        },
        "the first tool call raises (span ERROR), the agent recovers with a second call",
    ),
    Task(
        "arith-wrong",
        "Compute (10 + 5) * 3.",
        "45",
        "calc",
        {
            "calc": [
                Call([("add", {"a": 10, "b": 5})]),
                Call([("multiply", {"a": 15, "b": 3})]),
                Say("(10 + 5) * 3 = 40"),
            ]
        },
        "wrong answer after 2 tool calls",
    ),
    Task(
        "arith-seven-tools",
        "Compute (1+2)*(3+4) + (5+6)*(7+8).",
        "186",
        "calc",
        {
            "calc": [
                Call(
                    [
                        ("add", {"a": 1, "b": 2}),
                        ("add", {"a": 3, "b": 4}),
                        ("add", {"a": 5, "b": 6}),
                        ("add", {"a": 7, "b": 8}),
                    ]
                ),
                Call([("multiply", {"a": 3, "b": 7}), ("multiply", {"a": 11, "b": 15})]),
                Call([("add", {"a": 21, "b": 165})]),
                Say("(1+2)*(3+4) + (5+6)*(7+8) = 186"),
            ]
        },
        "7 tool calls: 4 parallel, then 2 parallel, then 1",
    ),
    Task(
        "weather-unknown-tool",
        "Forecast for Paris?",
        "18C",
        "weather",
        {
            "weather": [
                Call([("get_forecast", {"city": "Paris"})]),
                Call([("get_weather", {"city": "Paris"})]),
                Say("No forecast tool; it is 18C in Paris now."),
            ]
        },
        "the model first calls a tool that does not exist (AutoGen answers 'not found', no tool "
        "span, "
        "no tool body), then a real one",
    ),
    Task(
        "weather-model-error",
        "Weather in Oslo?",
        "3C",
        "weather",
        {"weather": [Call([("get_weather", {"city": "Oslo"})]), Fail(500)]},
        "1 tool call, then the provider answers HTTP 500: openai.InternalServerError escapes "
        "agent.run",
    ),
    Task(
        "weather-streaming",
        "Weather in Oslo? (streamed)",
        "3C",
        "weather_stream",
        {"weather_stream": [Call([("get_weather", {"city": "Oslo"})]), Say("Oslo: 3C, cold.")]},
        "model_client_stream=True with stream_options include_usage: SSE chunks, usage in the "
        "last chunk",
    ),
    Task(
        "weather-reflect",
        "Weather in London?",
        "12C",
        "weather_reflect",
        {
            "weather_reflect": [
                Call([("get_weather", {"city": "London"})]),
                Say("London is at 12C."),
            ]
        },
        "reflect_on_tool_use=True: the second model call is the reflection after the tool",
    ),
    Task(
        "swarm-refund",
        "Please refund order 42.",
        "Refunded order 42",
        "swarm",
        {
            "triage": [
                Call([("lookup_order", {"order_id": 42})]),
                Call([("transfer_to_billing", {})], handoffs=("transfer_to_billing",)),
            ],
            "billing": [
                Call([("refund_order", {"order_id": 42})]),
                Say("Refunded order 42 (39.90 EUR). TERMINATE"),
            ],
        },
        "Swarm: triage hands off to billing via the transfer_to_billing handoff tool (1 handoff)",
    ),
    Task(
        "swarm-roundtrip",
        "Order 7 arrived damaged, refund it and confirm.",
        "Order 7 refunded",
        "swarm",
        {
            "triage": [
                Call(
                    [("lookup_order", {"order_id": 7}), ("transfer_to_billing", {})],
                    handoffs=("transfer_to_billing",),
                ),
                Say("Order 7 refunded, you will get 24.00 EUR back. TERMINATE"),
            ],
            "billing": [
                Call([("refund_order", {"order_id": 7})]),
                Call([("transfer_to_triage", {})], handoffs=("transfer_to_triage",)),
            ],
        },
        "Swarm: a tool call and a handoff in the same model response, then billing hands back (2 "
        "handoffs)",
    ),
    Task(
        "roundrobin-review",
        "Write one line on which port OTLP/gRPC uses.",
        "4317",
        "roundrobin",
        {
            "writer": [
                Call(
                    [
                        ("search_docs", {"query": "otlp ports"}),
                        ("search_docs", {"query": "retention"}),
                    ]
                ),
                Call([("search_docs", {"query": "otlp ports"})]),
                Say("Draft: OTLP uses port 4318."),
                Call(
                    [
                        ("search_docs", {"query": "otlp ports"}),
                        ("search_docs", {"query": "badge count"}),
                    ]
                ),
                Say("OTLP/gRPC uses port 4317."),
            ],
            "critic": [Say("4318 is the HTTP port; fix it for gRPC."), Say("APPROVE")],
        },
        "RoundRobinGroupChat writer/critic, two rounds, APPROVE ends it; the writer makes 5 tool "
        "calls "
        "(2 parallel + 1, then 2 parallel in its second turn)",
    ),
    Task(
        "selector-research",
        "How many badges were awarded last week?",
        "42 badges",
        "selector",
        {
            "selector": [Say("researcher"), Say("writer")],
            "researcher": [
                Call(
                    [
                        ("search_docs", {"query": "badge count"}),
                        ("search_docs", {"query": "retention"}),
                    ]
                ),
                Call(
                    [
                        ("search_docs", {"query": "badge count"}),
                        ("search_docs", {"query": "otlp ports"}),
                    ]
                ),
                Say("Docs: 42 badges last week."),
            ],
            "writer": [Say("Last week the collector awarded 42 badges. TERMINATE")],
        },
        "SelectorGroupChat: the selector's own model calls pick the next speaker (LLM calls "
        "outside any "
        "agent span); the researcher makes 4 tool calls (2 parallel, twice)",
    ),
    Task(
        "agent-as-tool",
        "Ask the researcher how long runs are kept.",
        "30 days",
        "agent_tool",
        {
            "orchestrator": [
                Call([("researcher", {"task": "How long are runs kept?"})]),
                Say("Runs are kept for 30 days."),
            ],
            "researcher": [
                Call([("search_docs", {"query": "retention"})]),
                Say("30 days by default."),
            ],
        },
        "AgentTool: the orchestrator calls the researcher agent as a tool (1 tool call of the "
        "orchestrator, named researcher) and the researcher calls search_docs (1 tool call): 2 "
        "tool calls, 0 handoffs",
    ),
    Task(
        "team-model-error",
        "Write one line on data retention.",
        "30 days",
        "roundrobin",
        {
            "writer": [
                Call([("search_docs", {"query": "retention"})]),
                Say("Runs are kept 30 days."),
            ],
            "critic": [Fail(500)],
        },
        "RoundRobinGroupChat: the critic's model call fails (HTTP 500); the team raises, the run "
        "errors",
    ),
    Task(
        "selector-wrong",
        "How many badges were awarded last week?",
        "42 badges",
        "selector",
        {
            "selector": [Say("researcher"), Say("writer")],
            "researcher": [
                Call([("search_docs", {"query": "badge count"})]),
                Say("Docs mention badges."),
            ],
            "writer": [Say("Last week the collector awarded 40 badges. TERMINATE")],
        },
        "SelectorGroupChat, wrong final answer",
    ),
]


async def run_task(task: Task) -> str:
    from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
    from autogen_agentchat.teams import RoundRobinGroupChat, SelectorGroupChat, Swarm

    if task.kind in ("calc", "weather"):
        agent = await make_agent(task.kind)
        result = await agent.run(task=task.prompt)
        return final_text(result, agent.name)
    if task.kind == "weather_stream":
        agent = assistant(
            "weather_stream",
            [get_weather],
            model_client_stream=True,
            max_tool_iterations=4,
            client_kwargs={"stream_usage": True},
        )
        result = await agent.run(task=task.prompt)
        return final_text(result, agent.name)
    if task.kind == "weather_reflect":
        agent = assistant("weather_reflect", [get_weather], reflect_on_tool_use=True)
        result = await agent.run(task=task.prompt)
        return final_text(result, agent.name)
    if task.kind == "swarm":
        triage = assistant("triage", [lookup_order], handoffs=["billing"], max_tool_iterations=4)
        billing = assistant("billing", [refund_order], handoffs=["triage"], max_tool_iterations=4)
        team = Swarm([triage, billing], termination_condition=TextMentionTermination("TERMINATE"))
        result = await team.run(task=task.prompt)
        return final_text(result)
    if task.kind == "roundrobin":
        writer = assistant("writer", [search_docs], max_tool_iterations=4)
        critic = assistant(
            "critic", system_message="Review the draft. Say APPROVE when it is right."
        )
        team = RoundRobinGroupChat(
            [writer, critic],
            termination_condition=TextMentionTermination("APPROVE") | MaxMessageTermination(12),
        )
        result = await team.run(task=task.prompt)
        return final_text(result, "writer")
    if task.kind == "selector":
        researcher = assistant(
            "researcher",
            [search_docs],
            max_tool_iterations=4,
            description="Finds facts in the documentation.",
        )
        writer = assistant("writer", description="Writes the final answer.")
        reviewer = assistant(
            "reviewer", description="Reviews answers (not needed for simple facts)."
        )
        team = SelectorGroupChat(
            [researcher, writer, reviewer],
            model_client=model_client("selector"),
            termination_condition=TextMentionTermination("TERMINATE") | MaxMessageTermination(12),
        )
        result = await team.run(task=task.prompt)
        return final_text(result, "writer")
    if task.kind == "agent_tool":
        researcher = assistant(
            "researcher", [search_docs], max_tool_iterations=3, description="Docs researcher."
        )
        orchestrator = assistant(
            "orchestrator",
            [counted_agent_tool(researcher)],
            max_tool_iterations=3,
            client_kwargs={"parallel_tool_calls": False},
        )
        result = await orchestrator.run(task=task.prompt)
        return final_text(result, "orchestrator")
    raise ValueError(task.kind)


async def make_agent(kind: str) -> Any:
    """A single agent, created inside the run (its create_agent span is then in the run's trace)."""
    from autogen_core.memory import ListMemory, MemoryContent

    if kind == "calc":
        return assistant("calc", [add, multiply], max_tool_iterations=8)
    memory = ListMemory(name="user_prefs")
    await memory.add(
        MemoryContent(content="The user wants temperatures in Celsius.", mime_type="text/plain")
    )
    return assistant("weather", [get_weather], max_tool_iterations=4, memory=[memory])


def main() -> int:
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "AutoGen AgentChat 0.7 (autogen-agentchat/-core/-ext) with its native OpenTelemetry "
            "tracing "
            "(create_agent / invoke_agent / execute_tool GenAI spans + SingleThreadedAgentRuntime "
            "messaging "
            "spans, global TracerProvider) and opentelemetry-instrumentation-openai (OpenLLMetry) "
            "for model "
            "calls, as AutoGen's tracing guide sets it up; real OpenAIChatCompletionClient + "
            "openai SDK over a "
            "scripted in-process HTTP transport; OTLP/HTTP protobuf, "
            f"BatchSpanProcessor(max_export_batch_size={BATCH})."
        ),
    )
    problems: list[str] = []
    with rec:
        provider = rec.tracer_provider(service_name=SERVICE, transport="http", batch_size=BATCH)
        trace.set_tracer_provider(provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        for task in TASKS:
            BACKEND.load(task.script)
            with rec.run(provider, task_id=task.task_id, expected_output=task.expected) as run:
                run.notes = task.notes
                out = asyncio.run(run_task(task))
                run.output = out
                run.success = task.expected in out
            left = BACKEND.leftovers()
            if left or BACKEND.problems:
                problems.append(
                    f"{task.task_id}: unused replies {left}, problems {BACKEND.problems}"
                )
                BACKEND.problems = []
        rec.flush()
    rec.finish(
        packages=[
            "autogen-agentchat",
            "autogen-core",
            "autogen-ext",
            "openai",
            "httpx2",
            "opentelemetry-instrumentation-openai",
            "opentelemetry-semantic-conventions-ai",
            "opentelemetry-instrumentation",
        ],
        notes=NOTES,
    )
    for line in problems:
        print("SCRIPT PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


NOTES: list[str] = [
    "AutoGen native spans (scope `autogen-core`, gen_ai.system=autogen): `create_agent <name>` "
    "(CLIENT, "
    "gen_ai.operation.name=create_agent, emitted in the agent's constructor: outside a run it is "
    "a trace of its "
    "own), `invoke_agent <name>` (CLIENT, invoke_agent, gen_ai.agent.name/.id/.description), "
    "`execute_tool "
    "<tool>` (INTERNAL, execute_tool, gen_ai.tool.name/.description/.call.id; ERROR + exception "
    "event + "
    "error.type when the tool raises, the agent still recovers).",
    "AutoGen has no LLM span of its own: model calls come from "
    "opentelemetry-instrumentation-openai (`openai.chat`, "
    "CLIENT, gen_ai.operation.name=chat, gen_ai.usage.input_tokens/output_tokens, "
    "gen_ai.input/output.messages), "
    "as AutoGen's tracing guide sets it up. Without a provider-SDK instrumentation a run shows no "
    "LLM call and no "
    "tokens.",
    "Handoff tools (Swarm, `handoffs=[...]`) are real tools named `transfer_to_<agent>` with "
    "description "
    "`Handoff to <agent>.`: each gets an `execute_tool transfer_to_<agent>` span exactly like a "
    "user tool. Ground "
    "truth counts them as handoffs, not tool calls.",
    "AgentTool (agent as a tool): `execute_tool <agent>` whose child is `invoke_agent <agent>` "
    "(gen_ai.tool.name == gen_ai.agent.name). Ground truth counts it as one tool call of the "
    "calling agent (counted when the AgentTool runs), plus the sub-agent's own tool calls; it is "
    "not a handoff.",
    "Teams (RoundRobinGroupChat, Swarm, SelectorGroupChat) run on SingleThreadedAgentRuntime, "
    "which adds messaging "
    "spans `autogen create|send|publish|process|ack <agent_type>_<uuid>.(<uuid>)-A|T` "
    "(PRODUCER/CONSUMER, scope "
    "`autogen SingleThreadedAgentRuntime`, messaging.operation, span links to the sender; the "
    "`message` attribute "
    "holds the serialized message JSON). Span names carry a per-team UUID. They are 80-90% of a "
    "team run's spans.",
    "SelectorGroupChat's speaker selection is a model call (`openai.chat`) under an `autogen "
    "process "
    "SelectorGroupChatManager...` span, not under any agent span.",
    "A model call that fails: `openai.chat` status ERROR, error.type, exception event, no usage; "
    "the exception "
    "escapes agent.run (single agent) or becomes a RuntimeError from team.run. In a team, the "
    "other agents' "
    "containers log `ValueError: Unhandled message in agent container: GroupChatError` (an ERROR "
    "`autogen "
    "process` span): an AutoGen 0.7.5 quirk, not ours.",
    "A call to a tool that does not exist produces no span (AutoGen answers 'not found' to the "
    "model).",
    "Streaming (model_client_stream=True, stream_options include_usage): `openai.chat` with "
    "gen_ai.is_streaming=true, "
    "status OK (non-streamed: UNSET), one `gen_ai.content.completion.chunk` event per chunk, "
    "usage from the last "
    "chunk.",
    "ListMemory on an agent adds no span.",
]

if __name__ == "__main__":
    sys.exit(main())

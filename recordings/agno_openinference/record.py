"""Record agno (Agents and Teams) traced by openinference-instrumentation-agno.

The model is agno's own `OpenAIChat`, pointed at a fake OpenAI-compatible HTTP server that this
script starts on 127.0.0.1: it answers /v1/chat/completions from a per-run script (text, tool
calls, parallel tool calls, HTTP 500 errors; streamed as SSE when asked) and reports usage the way
OpenAI does, so agno, the openai SDK and the instrumentation all run their normal code.

Ground truth is counted in code: user tool bodies call `current().tool(...)` on entry; agno's
built-in tools (ReasoningTools' think/analyze, the memory tools) and the team leader's delegation
tools (`delegate_task_to_member(s)`) are counted where agno runs their entrypoint
(`FunctionCall._execute`, below the span the instrumentation makes): one delegation tool call is
one tool call of the leader, plus the member agents' own tool calls; every HTTP request that
reaches the fake server is one model call; a member agent starting a run inside a team is also
recorded as one handoff (a `pre_hooks` hook on each member; handoffs are not steps).

Usage: /work/envs/agno_openinference/bin/python recordings/agno_openinference/record.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

os.environ.setdefault("AGNO_TELEMETRY", "false")  # agno's own analytics ping: no network
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Recording, current  # noqa: E402

SCENARIO = "agno_openinference"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
BATCH = 6
ASSISTANT_SERVICE = "agno-assistant"
TEAM_SERVICE = "agno-support-team"

# ---------------------------------------------------------------------------------------------
# Fake OpenAI-compatible server
# ---------------------------------------------------------------------------------------------


def text(content: str) -> dict[str, Any]:
    """A scripted assistant answer with no tool call."""
    return {"content": content}


def calls(*tool_calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A scripted assistant message with one or more (parallel) tool calls."""
    return {"tool_calls": list(tool_calls)}


def fail(status: int = 500, message: str = "upstream model overloaded") -> dict[str, Any]:
    """A scripted failed model call (HTTP error from the provider)."""
    return {"error": status, "message": message}


class FakeOpenAI:
    """Scripted /v1/chat/completions: one queue of steps per model id, loaded per run."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.call_seq = 0
        self.unscripted: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, headers, payload = fake.answer(self.path, body)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def start(self) -> FakeOpenAI:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()

    def load(self, script: dict[str, list[dict[str, Any]]]) -> None:
        with self.lock:
            self.queues = {model: deque(steps) for model, steps in script.items()}

    def leftovers(self) -> dict[str, int]:
        with self.lock:
            return {model: len(q) for model, q in self.queues.items() if q}

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        model = str(body.get("model", ""))
        with self.lock:
            queue = self.queues.get(model)
            step = queue.popleft() if queue else None
            self.call_seq += 1
            seq = self.call_seq
        messages = body.get("messages") or []
        # Usage as a provider reports it: derived from the request size (prompt) and the answer.
        prompt_tokens = 20 + len(json.dumps(messages)) // 16 + 8 * len(body.get("tools") or [])
        if step is None:
            self.unscripted.append(model)
            step = fail(500, f"no scripted answer left for model {model!r}")
        if "error" in step:
            current().llm_error()
            err = {"error": {"message": step["message"], "type": "server_error", "code": None}}
            return step["error"], {"Content-Type": "application/json"}, json.dumps(err).encode()

        tool_calls = [
            {
                "id": f"call_{seq:03d}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(step.get("tool_calls", []))
        ]
        content = step.get("content")
        completion_tokens = 3 + len(content or "") // 4 + 12 * len(tool_calls)
        current().llm(input_tokens=prompt_tokens, output_tokens=completion_tokens)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        finish = "tool_calls" if tool_calls else "stop"
        ident = f"chatcmpl-{seq:04d}"
        created = int(time.time())
        if body.get("stream"):
            return (
                200,
                {"Content-Type": "text/event-stream"},
                self._sse(ident, created, model, content, tool_calls, finish, usage),
            )
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        completion = {
            "id": ident,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, {"Content-Type": "application/json"}, json.dumps(completion).encode()

    @staticmethod
    def _sse(
        ident: str,
        created: int,
        model: str,
        content: str | None,
        tool_calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, int],
    ) -> bytes:
        def chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
            data = {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
                **extra,
            }
            return f"data: {json.dumps(data)}\n\n"

        out = [chunk([{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}])]
        if content:
            words = content.split(" ")
            for i, word in enumerate(words):
                piece = word if i == 0 else " " + word
                out.append(
                    chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
                )
        for i, call in enumerate(tool_calls):
            delta = {"tool_calls": [{"index": i, **call}]}
            out.append(chunk([{"index": 0, "delta": delta, "finish_reason": None}]))
        out.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
        out.append(chunk([], usage=usage))
        out.append("data: [DONE]\n\n")
        return "".join(out).encode()


FAKE = FakeOpenAI()

# ---------------------------------------------------------------------------------------------
# User tools (counted in their bodies)
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


USER_TOOLS = {"get_weather", "convert_currency", "add", "multiply", "lookup_order", "search_docs"}


def _count_builtin_tools() -> None:
    """Count agno's built-in tool entrypoints where agno runs them.

    Built-in tools: think, analyze, the memory tools, and a team leader's delegation tools
    (delegate_task_to_member / delegate_task_to_members: one call is one tool call of the leader,
    however many members it runs; the members' own tools count themselves).
    `FunctionCall.execute` is what the instrumentation wraps in a TOOL span; `_execute` is agno's
    own body below it. User tools count themselves.
    """
    from agno.tools.function import FunctionCall

    sync_execute = FunctionCall._execute
    async_execute = FunctionCall._aexecute

    def counted(call: Any) -> bool:
        name = call.function.name
        if name in USER_TOOLS:
            return False
        current().tool(name)
        return True

    def _execute(self: Any) -> Any:
        builtin = counted(self)
        result = sync_execute(self)
        if builtin and result.status == "failure":
            current().tool_error()
        return result

    async def _aexecute(self: Any) -> Any:
        builtin = counted(self)
        result = await async_execute(self)
        if builtin and result.status == "failure":
            current().tool_error()
        return result

    FunctionCall._execute = _execute  # type: ignore[method-assign]
    FunctionCall._aexecute = _aexecute  # type: ignore[method-assign]


def handoff_hook(agent: Any) -> None:
    """Pre-hook on team members: a member starting a run is one handoff from the leader."""
    current().handoff()


# ---------------------------------------------------------------------------------------------
# Agents and teams
# ---------------------------------------------------------------------------------------------


def model(model_id: str) -> Any:
    from agno.models.openai import OpenAIChat

    # max_retries=0: one model call is one HTTP request (the openai SDK retries 5xx by default).
    return OpenAIChat(id=model_id, base_url=FAKE.base_url, api_key="sk-fake", max_retries=0)


def assistant(tools: list[Any], **kwargs: Any) -> Any:
    from agno.agent import Agent

    return Agent(
        name="assistant",
        id="assistant",
        model=model("scripted-gpt"),
        tools=tools,
        instructions="You are a concise assistant. Use the tools; answer in one sentence.",
        telemetry=False,
        **kwargs,
    )


def member(name: str, model_id: str, tools: list[Any], role: str) -> Any:
    from agno.agent import Agent

    return Agent(
        name=name,
        id=name,
        role=role,
        model=model(model_id),
        tools=tools,
        pre_hooks=[handoff_hook],
        telemetry=False,
    )


def team(mode: str, **kwargs: Any) -> Any:
    from agno.team import Team
    from agno.team.mode import TeamMode

    return Team(
        name="support-team",
        id="support-team",
        mode=TeamMode(mode),
        model=model("leader-gpt"),
        members=[
            member("weather-agent", "weather-gpt", [get_weather], "Answers weather questions"),
            member(
                "finance-agent",
                "finance-gpt",
                [convert_currency, add, multiply],
                "Does arithmetic and currency conversion",
            ),
        ],
        instructions="Delegate to the right member and give a one-sentence answer.",
        telemetry=False,
        **kwargs,
    )


def checked(output: Any) -> str:
    """What a user does with an agno RunOutput: agno returns errors as status=error, not raises."""
    from agno.run import RunStatus

    if getattr(output, "status", None) == RunStatus.error:
        raise RuntimeError(f"agno run failed: {output.content}")
    return str(output.content)


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    task_id: str
    service: str  # ASSISTANT_SERVICE or TEAM_SERVICE
    expected: str
    script: dict[str, list[dict[str, Any]]]
    go: Callable[[str], Any]  # prompt -> output string
    prompt: str
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def run_agent(tools: list[Any], **kwargs: Any) -> Callable[[str], str]:
    return lambda prompt: checked(assistant(tools, **kwargs).run(prompt))


def arun_agent(tools: list[Any]) -> Callable[[str], str]:
    return lambda prompt: checked(asyncio.run(assistant(tools).arun(prompt)))


def stream_agent(tools: list[Any]) -> Callable[[str], str]:
    def go(prompt: str) -> str:
        from agno.run.agent import RunOutput

        final = None
        for event in assistant(tools).run(prompt, stream=True, yield_run_output=True):
            if isinstance(event, RunOutput):
                final = event
        return checked(final)

    return go


def reasoning_agent(prompt: str) -> str:
    from agno.tools.reasoning import ReasoningTools

    return checked(assistant([ReasoningTools(), get_weather]).run(prompt))


def reasoning_model_agent(prompt: str) -> str:
    # agno 3: reasoning is enabled by giving a native reasoning model (o1/o3/o4/gpt-5 ids for
    # OpenAIChat); agno runs an internal reasoning agent on it before the main model call.
    agent = assistant([get_weather], reasoning_model=model("o4-mini"))
    return checked(agent.run(prompt))


def memory_agent(prompt: str) -> str:
    from agno.db.in_memory import InMemoryDb
    from agno.memory import MemoryManager

    agent = assistant(
        [],
        db=InMemoryDb(),
        memory_manager=MemoryManager(model=model("memory-gpt")),
        enable_agentic_memory=True,
    )
    return checked(agent.run(prompt, user_id="user-42"))


def background_memory_agent(prompt: str) -> str:
    from agno.db.in_memory import InMemoryDb
    from agno.memory import MemoryManager

    agent = assistant(
        [],
        db=InMemoryDb(),
        memory_manager=MemoryManager(model=model("memory-gpt")),
        update_memory_on_run=True,
    )
    return checked(agent.run(prompt, user_id="user-42"))


def run_team(mode: str) -> Callable[[str], str]:
    return lambda prompt: checked(team(mode).run(prompt))


def arun_team(mode: str) -> Callable[[str], str]:
    return lambda prompt: checked(asyncio.run(team(mode).arun(prompt)))


def delegate(member_id: str, task: str) -> tuple[str, dict[str, Any]]:
    return ("delegate_task_to_member", {"member_id": member_id, "task": task})


SCENARIOS: list[Scenario] = [
    Scenario(
        "greet-no-tools",
        ASSISTANT_SERVICE,
        "Hello",
        {"scripted-gpt": [text("Hello! How can I help you today?")]},
        run_agent([get_weather]),
        "Hi there",
        "0 tool calls, 1 model call",
    ),
    Scenario(
        "weather-paris",
        ASSISTANT_SERVICE,
        "18C",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Paris"})),
                text("It is 18C and sunny in Paris."),
            ]
        },
        run_agent([get_weather]),
        "What's the weather in Paris?",
        "1 tool call",
    ),
    Scenario(
        "arith-chain",
        ASSISTANT_SERVICE,
        "126",
        {
            "scripted-gpt": [
                calls(("add", {"a": 17, "b": 25})),
                calls(("multiply", {"a": 42, "b": 3})),
                text("(17 + 25) * 3 = 126"),
            ]
        },
        run_agent([add, multiply]),
        "Compute (17 + 25) * 3",
        "2 sequential tool calls",
    ),
    Scenario(
        "weather-parallel-3",
        ASSISTANT_SERVICE,
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
        run_agent([get_weather]),
        "Weather in Paris, Oslo and Rome?",
        "3 parallel tool calls in one model response (sync run: agno runs them one after another)",
    ),
    Scenario(
        "currency-error-recover",
        ASSISTANT_SERVICE,
        "92.00 EUR",
        {
            "scripted-gpt": [
                calls(
                    (
                        "convert_currency",
                        {"amount": 100, "from_currency": "USD", "to_currency": "EURO"},
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
        run_agent([convert_currency]),
        "Convert 100 USD to euros",
        "tool raises (agno catches it, returns the error to the model), model retries and recovers",
    ),
    Scenario(
        "orders-total-7-tools",
        ASSISTANT_SERVICE,
        "80",
        {
            "scripted-gpt": [
                calls(*[("lookup_order", {"order_id": f"A-10{i}"}) for i in range(4)]),
                calls(("add", {"a": 40, "b": 25}), ("add", {"a": 10, "b": 5})),
                calls(("add", {"a": 65, "b": 15})),
                text("The four orders total 80 USD."),
            ]
        },
        run_agent([lookup_order, add]),
        "What is the total of orders A-100 to A-103?",
        "7 tool calls: 4 parallel, 2 parallel, 1",
    ),
    Scenario(
        "weather-wrong-answer",
        ASSISTANT_SERVICE,
        "22C",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Rome"})),
                text("It is 12C in Rome."),
            ]
        },
        run_agent([get_weather]),
        "How warm is it in Rome?",
        "1 tool call, model misreads the result: wrong answer",
    ),
    Scenario(
        "model-outage",
        ASSISTANT_SERVICE,
        "18C",
        {"scripted-gpt": [fail(500)]},
        run_agent([get_weather]),
        "What's the weather in Paris?",
        "first model call gets HTTP 500; agno returns status=error, the caller raises",
    ),
    Scenario(
        "docs-then-outage",
        ASSISTANT_SERVICE,
        "14 days",
        {
            "scripted-gpt": [
                calls(("search_docs", {"query": "refund policy"})),
                fail(503, "service unavailable"),
            ]
        },
        run_agent([search_docs]),
        "How long do refunds take?",
        "1 tool call, then the second model call gets HTTP 503; the caller raises",
    ),
    Scenario(
        "reasoning-tools-weather",
        ASSISTANT_SERVICE,
        "15C",
        {
            "scripted-gpt": [
                calls(
                    (
                        "think",
                        {
                            "title": "Plan",
                            "thought": "I need Tokyo's current weather.",
                            "action": "call get_weather",
                            "confidence": 0.9,
                        },
                    )
                ),
                calls(("get_weather", {"city": "Tokyo"})),
                calls(
                    (
                        "analyze",
                        {
                            "title": "Check",
                            "result": "Tokyo: 15C, cloudy",
                            "analysis": "The tool answered; 15C.",
                            "next_action": "final_answer",
                            "confidence": 0.95,
                        },
                    )
                ),
                text("It is 15C and cloudy in Tokyo."),
            ]
        },
        reasoning_agent,
        "Weather in Tokyo?",
        "agno ReasoningTools: think and analyze tools around a user tool",
    ),
    Scenario(
        "reasoning-model-weather",
        ASSISTANT_SERVICE,
        "22C",
        {
            "o4-mini": [
                text("<think>The user wants Rome's weather; call get_weather once.</think>")
            ],
            "scripted-gpt": [
                calls(("get_weather", {"city": "Rome"})),
                text("Rome is 22C and clear."),
            ],
        },
        reasoning_model_agent,
        "Weather in Rome?",
        "Agent(reasoning_model=o4-mini): agno's internal reasoning agent makes one "
        "model call before the main loop",
    ),
    Scenario(
        "agentic-memory",
        ASSISTANT_SERVICE,
        "Celsius",
        {
            "scripted-gpt": [
                calls(("update_user_memory", {"task": "Remember: the user prefers Celsius."})),
                text("Noted: I will use Celsius from now on."),
            ],
            "memory-gpt": [
                calls(("add_memory", {"memory": "Prefers Celsius", "topics": ["units"]})),
                text("Memory added."),
            ],
        },
        memory_agent,
        "Please always use Celsius with me.",
        "enable_agentic_memory: update_user_memory tool runs the MemoryManager's own model call, "
        "which calls the add_memory tool (nested tool)",
    ),
    Scenario(
        "async-parallel-weather",
        ASSISTANT_SERVICE,
        "Paris 18C and Tokyo 15C",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
                text("Paris 18C and Tokyo 15C"),
            ]
        },
        arun_agent([get_weather]),
        "Weather in Paris and Tokyo?",
        "Agent.arun: 2 parallel tool calls run concurrently (asyncio.gather)",
    ),
    Scenario(
        "stream-weather",
        ASSISTANT_SERVICE,
        "4C",
        {
            "scripted-gpt": [
                calls(("get_weather", {"city": "Oslo"})),
                text("It is 4C with rain in Oslo."),
            ]
        },
        stream_agent([get_weather]),
        "Weather in Oslo?",
        "Agent.run(stream=True): streamed chat completions (SSE) with usage in the last chunk",
    ),
    Scenario(
        "team-route-weather",
        TEAM_SERVICE,
        "18C",
        {
            "leader-gpt": [calls(delegate("weather-agent", "Current weather in Paris"))],
            "weather-gpt": [
                calls(("get_weather", {"city": "Paris"})),
                text("Paris is 18C and sunny."),
            ],
        },
        run_team("route"),
        "What's the weather in Paris?",
        "Team mode=route: leader delegates to one member, member's answer returned directly",
    ),
    Scenario(
        "team-coordinate-two-members",
        TEAM_SERVICE,
        "12",
        {
            "leader-gpt": [
                calls(
                    delegate("weather-agent", "Current weather in Oslo"),
                    delegate("finance-agent", "Compute 4 * 3"),
                ),
                text("Oslo is 4C with rain, and 4 * 3 = 12."),
            ],
            "weather-gpt": [calls(("get_weather", {"city": "Oslo"})), text("Oslo: 4C, rain.")],
            "finance-gpt": [calls(("multiply", {"a": 4, "b": 3})), text("4 * 3 = 12")],
        },
        run_team("coordinate"),
        "Weather in Oslo, and what is 4 * 3?",
        "Team mode=coordinate: two delegations in one leader response, each member uses a tool, "
        "leader synthesizes",
    ),
    Scenario(
        "team-member-error-wrong",
        TEAM_SERVICE,
        "79.00 GBP",
        {
            "leader-gpt": [
                calls(delegate("finance-agent", "Convert 100 USD to GBP")),
                text("100 USD is 92.00 GBP."),
            ],
            "finance-gpt": [
                calls(
                    (
                        "convert_currency",
                        {"amount": 100, "from_currency": "USD", "to_currency": "POUND"},
                    )
                ),
                calls(
                    (
                        "convert_currency",
                        {"amount": 100, "from_currency": "USD", "to_currency": "GBP"},
                    )
                ),
                text("100 USD = 79.00 GBP"),
            ],
        },
        run_team("coordinate"),
        "Convert 100 USD to pounds",
        "member's tool raises, member recovers; the leader then answers wrong",
    ),
    Scenario(
        "team-broadcast-async",
        TEAM_SERVICE,
        "Tokyo",
        {
            "leader-gpt": [
                calls(("delegate_task_to_members", {"task": "Say which city you cover: Tokyo"})),
                text("Both members cover Tokyo."),
            ],
            "weather-gpt": [text("I cover Tokyo weather.")],
            "finance-gpt": [text("I cover Tokyo prices.")],
        },
        arun_team("broadcast"),
        "Which city do you cover?",
        "Team mode=broadcast via Team.arun: one delegate_task_to_members call reaches both "
        "members concurrently; no user tools",
    ),
    Scenario(
        "team-leader-outage",
        TEAM_SERVICE,
        "22C",
        {
            "leader-gpt": [calls(delegate("weather-agent", "Weather in Rome")), fail(500)],
            "weather-gpt": [calls(("get_weather", {"city": "Rome"})), text("Rome: 22C, clear.")],
        },
        run_team("coordinate"),
        "Weather in Rome?",
        "member answers, then the leader's second model call gets HTTP 500; the caller raises",
    ),
]


# Kept out of the recording (see README): agno runs this memory update on a ThreadPoolExecutor
# without the OpenTelemetry context, so its spans arrive as root-less traces of their own.
BACKGROUND_MEMORY = Scenario(
    "background-memory",
    ASSISTANT_SERVICE,
    "Celsius",
    {
        "scripted-gpt": [text("Sure, Celsius it is.")],
        "memory-gpt": [
            calls(("add_memory", {"memory": "Prefers Celsius", "topics": ["units"]})),
            text("Memory added."),
        ],
    },
    background_memory_agent,
    "I prefer Celsius.",
    "update_memory_on_run: the MemoryManager's model call and add_memory tool run in agno's "
    "background thread pool",
)

# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------

PACKAGES = [
    "agno",
    "openinference-instrumentation-agno",
    "openinference-instrumentation",
    "openinference-semantic-conventions",
    "openai",
    "httpx",
    "pydantic",
]


NOTES = [
    "Ground truth: each team delegation tool call (delegate_task_to_member, "
    "delegate_task_to_members) is one tool call of the leader (its entrypoint ran), plus the "
    "members' own tool calls; each member run is also recorded as a handoff (a pre_hook on the "
    "members). agno's built-in tools (think, analyze, update_user_memory, add_memory) are counted "
    "as tool steps (their entrypoint ran).",
    "openinference-instrumentation-agno: all spans INTERNAL; AGENT `<name>.run|arun`, LLM "
    "`<ModelClass>.invoke|ainvoke|invoke_stream` with llm.token_count.prompt/completion, TOOL "
    "span named by the bare tool name with tool.name/tool.parameters and no tool-call id.",
    "A team member's AGENT span is NOT a child of the delegate_task_to_member TOOL span: it is a "
    "sibling under the team span, inside the tool span's time interval (agno runs delegation as a "
    "generator that is iterated outside the tool span's context). Members carry "
    "graph.node.parent_id = the leader's graph.node.id.",
    "agno never raises from Agent.run/Team.run on a model error: it returns status=error (AGENT "
    "span ERROR without exception event, LLM span ERROR with one); the script raises on it.",
    "A tool that raises: agno catches it and returns the message to the model; TOOL span ERROR, "
    "no exception event.",
    "Not in this recording: update_memory_on_run=True (background memory) emits its LLM and tool "
    "spans as root-less traces of their own (agno's thread pool drops the context); "
    "`record.py --background-memory DIR` records it.",
]


def main(argv: list[str]) -> int:
    """Record SCENARIOS into OUT; `--background-memory DIR` records only that run into DIR."""
    from openinference.instrumentation.agno import AgnoInstrumentor

    scenarios, scenario_name, out = SCENARIOS, SCENARIO, OUT
    if argv[:1] == ["--background-memory"] and len(argv) == 2:
        scenarios, scenario_name, out = [BACKGROUND_MEMORY], f"{SCENARIO}_bgmemory", Path(argv[1])
    elif argv:
        print("usage: record.py [--background-memory DIR]", file=sys.stderr)
        return 2
    _count_builtin_tools()
    FAKE.start()
    rec = Recording(
        scenario=scenario_name,
        out=out,
        description=(
            "agno Agent and Team (route / coordinate / broadcast), agno's OpenAIChat against a "
            "scripted OpenAI-compatible server on localhost, openinference-instrumentation-agno "
            f"(AgnoInstrumentor), OTLP/HTTP protobuf, BatchSpanProcessor(max_export_batch_size="
            f"{BATCH}); two services, instrumented in turn."
        ),
    )
    problems: list[str] = []
    with rec:
        providers = {
            name: rec.tracer_provider(service_name=name, transport="http", batch_size=BATCH)
            for name in (ASSISTANT_SERVICE, TEAM_SERVICE)
        }
        instrumentor = AgnoInstrumentor()
        instrumented = None
        for scenario in scenarios:
            if instrumented != scenario.service:
                if instrumented is not None:
                    instrumentor.uninstrument()
                instrumentor.instrument(tracer_provider=providers[scenario.service])
                instrumented = scenario.service
            FAKE.load(scenario.script)
            with rec.run(providers[scenario.service], scenario.task_id, scenario.expected) as run:
                run.notes = scenario.notes
                out = scenario.go(scenario.prompt)
                run.output = out
                run.success = scenario.expected in str(out)
            if left := FAKE.leftovers():
                problems.append(f"{scenario.task_id}: unused scripted answers {left}")
            rec.flush()
        instrumentor.uninstrument()
    FAKE.stop()
    if FAKE.unscripted:
        problems.append(f"model calls with no scripted answer: {FAKE.unscripted}")
    rec.finish(packages=PACKAGES, notes=NOTES + problems)
    for line in problems:
        print("PROBLEM:", line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

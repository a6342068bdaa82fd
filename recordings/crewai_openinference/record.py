"""Record crewai + openinference-instrumentation-crewai/-litellm runs with the recording kit.

crewai's real Crew / Agent / Task machinery (sequential and hierarchical processes, delegation
between agents, planning, standalone `Agent.kickoff`) runs with crewai's real `LLM` routed
through LiteLLM (`is_litellm=True`), whose real OpenAI client talks to a scripted
OpenAI-compatible HTTP server that this script starts on 127.0.0.1: no other network. The fake
server answers `POST /v1/chat/completions` with chat completions (text, one or several
`tool_calls`, `usage.prompt_tokens/completion_tokens`) or with HTTP errors (400, 429), so
LiteLLM, crewai and both OpenInference instrumentations behave as with the real provider.

Ground truth is counted in code:
- tool calls: tool bodies entered (`current().tool` first thing in each of our tools, and in
  crewai's built-in collaboration tools "Delegate work to coworker" / "Ask question to
  coworker", whose `_run` the script wraps). An agent used as a tool is one tool call of the
  calling agent, plus the coworker's own tool calls.
- model calls: `current().llm` / `llm_error` in a wrapper around `litellm.completion`, the call
  crewai makes (one per call, whatever HTTP attempts the OpenAI client makes inside it: an HTTP
  429 retried by the client is not a model call of its own). The fake server's own per-run
  HTTP tally is only a cross-check.
- handoffs: `current().handoff()` in a crewai `before_tool_call` hook for each delegation to a
  coworker (recorded, not compared).

Run (no network needed; the namespace makes sure of it):
  unshare -n sh -c 'ip link set lo up && \
    /work/envs/crewai_openinference/bin/python recordings/crewai_openinference/record.py'
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# --------------------------------------------------------------------------------------------
# No network: crewai's own telemetry / tracing / version check off, LiteLLM's cost map local,
# and a guard that refuses (and reports) any connection or DNS lookup beyond loopback.
# OTEL_SDK_DISABLED is deliberately NOT set: it would also disable our own TracerProvider.
# --------------------------------------------------------------------------------------------
os.environ.update(
    CREWAI_DISABLE_TELEMETRY="true",
    CREWAI_DISABLE_TRACKING="true",
    CREWAI_TRACING_ENABLED="false",
    CREWAI_DISABLE_VERSION_CHECK="true",
    CREWAI_STORAGE_DIR=tempfile.mkdtemp(prefix="crewai-storage-"),
    LITELLM_LOCAL_MODEL_COST_MAP="True",
    OPENAI_API_KEY="sk-scripted-not-a-key",
)

NETWORK_VIOLATIONS: list[str] = []
_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _is_loopback(host: Any) -> bool:
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if isinstance(address, tuple) and not _is_loopback(address[0]):
        NETWORK_VIOLATIONS.append(f"connect {address!r}")
        raise OSError(f"network disabled for this recording: {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if isinstance(address, tuple) and not _is_loopback(address[0]):
        NETWORK_VIOLATIONS.append(f"connect_ex {address!r}")
        raise OSError(f"network disabled for this recording: {address!r}")
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and not _is_loopback(name):
        NETWORK_VIOLATIONS.append(f"getaddrinfo {name!r}")
        raise socket.gaierror(f"network disabled for this recording: {name!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Recording, current  # noqa: E402
from openinference.instrumentation.crewai import CrewAIInstrumentor  # noqa: E402
from openinference.instrumentation.litellm import LiteLLMInstrumentor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402

SCENARIO = "crewai_openinference"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
MODEL = "openai/gpt-4o-mini"
BATCH = 6
DELEGATION_TOOLS = {"delegate_work_to_coworker", "ask_question_to_coworker"}

# --------------------------------------------------------------------------------------------
# Scripted OpenAI-compatible server
# --------------------------------------------------------------------------------------------


@dataclass
class Turn:
    """One scripted model response: text and/or tool calls, or an HTTP error."""

    content: str | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    error: str = ""


def say(content: str) -> Turn:
    return Turn(content=content)


def call(*calls: tuple[str, dict[str, Any]]) -> Turn:
    return Turn(calls=list(calls))


def t(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    return (name, arguments)


def bad_request(message: str) -> Turn:
    """HTTP 400: not retried by the OpenAI client, LiteLLM raises BadRequestError."""
    return Turn(status=400, error=message)


def rate_limited() -> Turn:
    """HTTP 429: the OpenAI client inside LiteLLM retries it by itself."""
    return Turn(status=429, error="Rate limit reached for gpt-4o-mini (scripted)")


@dataclass
class HttpTally:
    """What the fake server saw in one run: a cross-check of the truth, not the truth itself."""

    requests: int = 0  # HTTP attempts
    retries: int = 0  # attempts the OpenAI client marked as retries (x-stainless-retry-count > 0)
    ok: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class FakeOpenAI:
    """Per-run scripts, one queue of turns per agent role (read from the prompt)."""

    ROLE = re.compile(r"You are (.+?)\.")

    def __init__(self) -> None:
        self.scripts: dict[str, deque[Turn]] = {}
        self.errors: list[str] = []
        self.requests = 0
        self.call_ids = 0
        self.lock = threading.Lock()
        self.tally = HttpTally()

    def load(self, scripts: dict[str, list[Turn]]) -> None:
        with self.lock:
            self.scripts = {role: deque(turns) for role, turns in scripts.items()}
            self.tally = HttpTally()

    def leftovers(self) -> dict[str, int]:
        with self.lock:
            return {role: len(q) for role, q in self.scripts.items() if q}

    def respond(
        self, body: dict[str, Any], retry_count: int
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Answer one HTTP attempt. Model calls are counted by `counted_completion`, not here."""
        messages = body.get("messages") or []
        first = messages[0].get("content") if messages else ""
        text = first if isinstance(first, str) else json.dumps(first)
        match = self.ROLE.search(text or "")
        role = match.group(1) if match else "?"
        with self.lock:
            self.requests += 1
            self.tally.requests += 1
            self.tally.retries += retry_count > 0
            queue = self.scripts.get(role)
            turn = queue.popleft() if queue else None
        if turn is None:
            message = f"no scripted turn left for role {role!r}"
            self.errors.append(message)
            return 400, {"error": {"message": message, "type": "invalid_request_error"}}, {}
        prompt_tokens = (len(json.dumps(messages)) + len(json.dumps(body.get("tools") or []))) // 4
        if turn.status != 200:
            kind = "rate_limit_error" if turn.status == 429 else "invalid_request_error"
            payload = {"error": {"message": turn.error, "type": kind, "code": None}}
            headers = {"retry-after-ms": "50"} if turn.status == 429 else {}
            return turn.status, payload, headers
        message: dict[str, Any] = {"role": "assistant", "content": turn.content}
        if turn.calls:
            tool_calls = []
            for name, arguments in turn.calls:
                with self.lock:
                    self.call_ids += 1
                    call_id = f"call_{self.call_ids:04d}"
                tool_calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)},
                    }
                )
            message["tool_calls"] = tool_calls
        completion_tokens = max(
            1, len(turn.content or "") // 4 + len(json.dumps(message.get("tool_calls", []))) // 4
        )
        with self.lock:
            self.tally.ok += 1
            self.tally.input_tokens += prompt_tokens
            self.tally.output_tokens += completion_tokens
        return (
            200,
            {
                "id": f"chatcmpl-scripted-{self.requests:04d}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": "gpt-4o-mini-2024-07-18",
                "system_fingerprint": "fp_scripted",
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "logprobs": None,
                        "finish_reason": "tool_calls" if turn.calls else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
            {},
        )


FAKE = FakeOpenAI()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this, Nagle + delayed ACK add ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            status, payload, headers = 404, {"error": {"message": "not found"}}, {}
            FAKE.errors.append(f"unexpected path {self.path}")
        else:
            retry_count = int(self.headers.get("x-stainless-retry-count") or 0)
            status, payload, headers = FAKE.respond(body, retry_count)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def start_fake_server() -> str:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


BASE_URL = start_fake_server()
# crewai's structured-output path for LiteLLM models (used by Crew(planning=True)) calls
# `instructor.from_litellm(litellm.completion)` WITHOUT the LLM's base_url/api_key: it only
# reaches our server through LiteLLM's standard environment variable.
os.environ["OPENAI_BASE_URL"] = BASE_URL

import litellm  # noqa: E402
from crewai import LLM, Agent, Crew, Process, Task  # noqa: E402
from crewai.hooks import before_tool_call  # noqa: E402
from crewai.tools import BaseTool, tool  # noqa: E402
from crewai.tools.agent_tools.ask_question_tool import AskQuestionTool  # noqa: E402
from crewai.tools.agent_tools.delegate_work_tool import DelegateWorkTool  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

# --------------------------------------------------------------------------------------------
# Model calls (ground truth): one per `litellm.completion` call, the call crewai makes (its
# `LLM.call` and its instructor structured-output path both look `litellm.completion` up at call
# time). HTTP attempts the OpenAI client makes inside one call (a 429 retried by the client)
# are not calls of their own; a call that finally fails (after retries or not) is one failed
# call. Installed before the LiteLLM instrumentor wraps `litellm.completion`, so the
# instrumentor's span encloses exactly one counted call (its uninstrument restores this wrapper).
# --------------------------------------------------------------------------------------------
LLM_PROBLEMS: list[str] = []
_real_completion = litellm.completion


@functools.wraps(_real_completion)
def counted_completion(*args: Any, **kwargs: Any) -> Any:
    if kwargs.get("stream"):
        LLM_PROBLEMS.append("a streamed litellm.completion call: usage not counted")
    try:
        response = _real_completion(*args, **kwargs)
    except Exception:
        current().llm_error()
        raise
    usage = getattr(response, "usage", None)
    if usage is None:
        LLM_PROBLEMS.append("a litellm.completion response without usage")
        current().llm()
    else:
        current().llm(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens)
    return response


litellm.completion = counted_completion

# --------------------------------------------------------------------------------------------
# crewai's built-in collaboration tools run a coworker and return its answer to the caller: an
# agent used as a tool, so each execution is one tool call of the calling agent (by the tool's
# name). Counted on entering the tool body (`_run`, below the `BaseTool.run` that the crewai
# instrumentation wraps), like our own tools.
# --------------------------------------------------------------------------------------------


def _counted_tool_body(real_run: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real_run)
    def run(self: BaseTool, *args: Any, **kwargs: Any) -> Any:
        current().tool(self.name)
        try:
            return real_run(self, *args, **kwargs)
        except Exception:
            current().tool_error()
            raise

    return run


for _collaboration_tool in (DelegateWorkTool, AskQuestionTool):
    _collaboration_tool._run = _counted_tool_body(_collaboration_tool._run)  # type: ignore[method-assign]

# --------------------------------------------------------------------------------------------
# Tools (ground truth: each body counts itself on entry)
# --------------------------------------------------------------------------------------------

WEATHER = {"Paris": 18, "Oslo": 4, "Rome": 22, "Athens": 27, "Lisbon": 20}
POPULATION = {"Paris": "2.1 million", "Rome": "2.8 million", "Oslo": "0.7 million"}
NOTES = {
    "solar": "Solar capacity grew 30% in 2025; storage costs fell 20%.",
    "wind": "Offshore wind added 12 GW in 2025.",
    "battery": "Grid batteries doubled in 2025.",
}


@tool("get_weather")
def get_weather(city: str) -> str:
    """Current temperature in a city, in Celsius."""
    current().tool("get_weather")
    if city not in WEATHER:
        current().tool_error()
        raise ValueError(f"unknown city: {city}")
    return f"{WEATHER[city]}C in {city}"


@tool("lookup_population")
def lookup_population(city: str) -> str:
    """Population of a city."""
    current().tool("lookup_population")
    return f"{city}: {POPULATION.get(city, 'unknown')}"


class ConvertArgs(BaseModel):
    celsius: float = Field(description="temperature in Celsius")


class ConvertTemperature(BaseTool):
    name: str = "convert_temperature"
    description: str = "Convert a Celsius temperature to Fahrenheit."
    args_schema: type[BaseModel] = ConvertArgs

    def _run(self, celsius: float) -> str:
        current().tool("convert_temperature")
        return f"{celsius * 9 / 5 + 32:.1f}F"


class ReportArgs(BaseModel):
    city: str = Field(description="city")
    celsius: float = Field(description="temperature in Celsius")


class FormatReport(BaseTool):
    name: str = "format_report"
    description: str = "Format the final weather report (its result is the final answer)."
    args_schema: type[BaseModel] = ReportArgs

    def _run(self, city: str, celsius: float) -> str:
        current().tool("format_report")
        return f"WEATHER REPORT | {city} | {celsius:g}C"


@tool("search_notes")
def search_notes(query: str) -> str:
    """Search the research notes for a topic."""
    current().tool("search_notes")
    if "classified" in query:
        current().tool_error()
        raise PermissionError("access denied: classified notes")
    for key, note in NOTES.items():
        if key in query.lower():
            return note
    return "no notes found"


@tool("word_count")
def word_count(text: str) -> str:
    """Count the words of a text."""
    current().tool("word_count")
    return str(len(text.split()))


@before_tool_call
def count_handoffs(context: Any) -> None:
    """crewai's documented tool hook: each delegation to a coworker is also recorded as a
    handoff (handoffs are recorded, not compared; the tool call is counted in its body)."""
    if context.tool_name in DELEGATION_TOOLS:
        current().handoff()
    return None


# --------------------------------------------------------------------------------------------
# Agents and crews
# --------------------------------------------------------------------------------------------


def llm() -> LLM:
    return LLM(model=MODEL, is_litellm=True, base_url=BASE_URL, api_key="sk-scripted-not-a-key")


def reporter(**extra: Any) -> Agent:
    return Agent(
        role="Weather Reporter",
        goal="Report accurate weather with the tools",
        backstory="You run the weather desk.",
        tools=extra.pop("tools", [get_weather, lookup_population, ConvertTemperature()]),
        llm=llm(),
        allow_delegation=False,
        verbose=False,
        **extra,
    )


def researcher(**extra: Any) -> Agent:
    return Agent(
        role="Researcher",
        goal="Find facts in the research notes",
        backstory="You dig up facts.",
        tools=[search_notes],
        llm=llm(),
        allow_delegation=False,
        verbose=False,
        **extra,
    )


def writer(tools: list[Any] | None = None) -> Agent:
    return Agent(
        role="Writer",
        goal="Write short, clear copy",
        backstory="You write the newsletter.",
        tools=tools or [],
        llm=llm(),
        allow_delegation=False,
        verbose=False,
    )


def editor() -> Agent:
    return Agent(
        role="Editor",
        goal="Deliver the final piece, delegating to coworkers",
        backstory="You run the newsroom and delegate.",
        tools=[],
        llm=llm(),
        allow_delegation=True,
        verbose=False,
    )


def weather_crew(description: str, expected: str, agent: Agent | None = None) -> Crew:
    agent = agent or reporter()
    task = Task(description=description, expected_output=expected, agent=agent)
    return Crew(agents=[agent], tasks=[task], process=Process.sequential, verbose=False)


@dataclass
class Case:
    task_id: str
    expected: str
    scripts: dict[str, list[Turn]]
    runner: Callable[[], Any]
    notes: str = ""


def kickoff(crew_factory: Callable[[], Crew]) -> Callable[[], str]:
    def run() -> str:
        return crew_factory().kickoff().raw

    return run


WR, RS, WT, ED, MGR, PLN = (
    "Weather Reporter",
    "Researcher",
    "Writer",
    "Editor",
    "Crew Manager",
    "Task Execution Planner",
)

PLAN = {
    "list_of_plans_per_task": [
        {"task_number": 1, "task": "Research", "plan": "Use search_notes on solar."},
        {"task_number": 2, "task": "Write", "plan": "Write one sentence from the research."},
    ]
}


def weather_cases() -> list[Case]:
    return [
        Case(
            "greet-no-tools",
            "Hello from the weather desk!",
            {WR: [say("Hello from the weather desk!")]},
            kickoff(lambda: weather_crew("Greet the audience.", "a greeting")),
            "0 tool calls, 1 model call",
        ),
        Case(
            "weather-paris",
            "18C",
            {WR: [call(t("get_weather", city="Paris")), say("18C")]},
            kickoff(lambda: weather_crew("Temperature in Paris?", "the temperature, e.g. 18C")),
            "1 tool call",
        ),
        Case(
            "weather-two-cities-parallel",
            "Paris 18C, Oslo 4C",
            {
                WR: [
                    call(t("get_weather", city="Paris"), t("get_weather", city="Oslo")),
                    say("Paris 18C, Oslo 4C"),
                ]
            },
            kickoff(lambda: weather_crew("Temperatures in Paris and Oslo?", "both temps")),
            "2 tool calls in one model response (crewai runs them in a thread pool)",
        ),
        Case(
            "weather-tool-error-recovers",
            "Athens 27C",
            {
                WR: [
                    call(t("get_weather", city="Atlantis")),
                    call(t("get_weather", city="Athens")),
                    say("Athens 27C"),
                ]
            },
            kickoff(lambda: weather_crew("Temperature in Atlantis (or Athens)?", "a temp")),
            "tool raises (unknown city), crewai feeds the error back, the agent recovers",
        ),
        Case(
            "trip-seven-tools",
            "Rome is warmest: 22C (71.6F), 2.8 million people",
            {
                WR: [
                    call(
                        t("get_weather", city="Paris"),
                        t("get_weather", city="Rome"),
                        t("get_weather", city="Oslo"),
                    ),
                    call(
                        t("convert_temperature", celsius=18),
                        t("convert_temperature", celsius=22),
                    ),
                    call(t("lookup_population", city="Rome")),
                    call(t("convert_temperature", celsius=4)),
                    say("Rome is warmest: 22C (71.6F), 2.8 million people"),
                ]
            },
            kickoff(
                lambda: weather_crew(
                    "Compare Paris, Rome and Oslo for a trip; give the warmest city.",
                    "warmest city with temperature and population",
                )
            ),
            "7 tool calls: parallel batches of 3 and 2, then 2 single calls; "
            "convert_temperature is a BaseTool subclass, the others @tool functions",
        ),
        Case(
            "convert-wrong-answer",
            "64.4F",
            {WR: [call(t("convert_temperature", celsius=18)), say("65F")]},
            kickoff(lambda: weather_crew("What is 18C in Fahrenheit?", "the value in F")),
            "1 tool call, the model then rounds wrongly (success false)",
        ),
        Case(
            "agent-kickoff-standalone",
            "22C",
            {WR: [call(t("get_weather", city="Rome")), say("22C")]},
            lambda: reporter().kickoff("Temperature in Rome?").raw,
            "Agent.kickoff() without a Crew (crewai 1.x standalone agent)",
        ),
        Case(
            "report-result-as-answer",
            "WEATHER REPORT | Lisbon | 20C",
            {
                WR: [
                    call(t("get_weather", city="Lisbon")),
                    call(t("format_report", city="Lisbon", celsius=20)),
                ]
            },
            kickoff(
                lambda: weather_crew(
                    "Weather report for Lisbon.",
                    "the formatted report",
                    reporter(tools=[get_weather, FormatReport(result_as_answer=True)]),
                )
            ),
            "built-in result_as_answer: the format_report tool's output is the final answer, "
            "no model call after it",
        ),
        Case(
            "model-error-first-call",
            "18C",
            {WR: [bad_request("Invalid 'messages': scripted 400")]},
            kickoff(lambda: weather_crew("Temperature in Paris?", "a temp")),
            "HTTP 400 on the first model call: litellm.BadRequestError escapes Crew.kickoff",
        ),
        Case(
            "model-error-after-tools",
            "Paris 18C, Oslo 4C",
            {
                WR: [
                    call(t("get_weather", city="Paris")),
                    call(t("get_weather", city="Oslo")),
                    bad_request("Invalid 'messages': scripted 400"),
                ]
            },
            kickoff(lambda: weather_crew("Temperatures in Paris then Oslo?", "both temps")),
            "2 tool calls, then HTTP 400: the exception escapes after tool work",
        ),
        Case(
            "rate-limited-then-recovers",
            "18C",
            {
                WR: [
                    rate_limited(),
                    call(t("get_weather", city="Paris")),
                    say("18C"),
                ]
            },
            kickoff(lambda: weather_crew("Temperature in Paris?", "a temp")),
            "HTTP 429 on the first request, retried by the OpenAI client inside the one "
            "litellm.completion call: 2 model calls (none failed), 3 HTTP requests",
        ),
    ]


def news_cases() -> list[Case]:
    def two_agents() -> Crew:
        r, w = researcher(), writer([word_count])
        return Crew(
            name="newsroom",
            agents=[r, w],
            tasks=[
                Task(description="Research solar and wind.", expected_output="facts", agent=r),
                Task(description="Write one sentence.", expected_output="a sentence", agent=w),
            ],
            process=Process.sequential,
            verbose=False,
        )

    def delegating(description: str) -> Callable[[], Crew]:
        def make() -> Crew:
            e, r, w = editor(), researcher(), writer([word_count])
            task = Task(description=description, expected_output="the piece", agent=e)
            return Crew(
                name="newsroom",
                agents=[e, r, w],
                tasks=[task],
                process=Process.sequential,
                verbose=False,
            )

        return make

    def hierarchical() -> Crew:
        r, w = researcher(), writer()
        task = Task(description="Produce a one-line battery brief.", expected_output="one line")
        return Crew(
            name="newsroom",
            agents=[r, w],
            tasks=[task],
            process=Process.hierarchical,
            manager_llm=llm(),
            verbose=False,
        )

    def planned() -> Crew:
        r, w = researcher(), writer()
        return Crew(
            name="newsroom",
            agents=[r, w],
            tasks=[
                Task(description="Research solar.", expected_output="facts", agent=r),
                Task(description="Write one sentence.", expected_output="a sentence", agent=w),
            ],
            process=Process.sequential,
            planning=True,
            planning_llm=llm(),
            verbose=False,
        )

    solar = "Solar grew 30% and wind added 12 GW in 2025."
    return [
        Case(
            "two-agents-sequential",
            solar,
            {
                RS: [
                    call(t("search_notes", query="solar"), t("search_notes", query="wind")),
                    say("Solar +30%, offshore wind +12 GW."),
                ],
                WT: [call(t("word_count", text=solar)), say(solar)],
            },
            kickoff(two_agents),
            "two tasks, two agents, no delegation; parallel tool calls in the first",
        ),
        Case(
            "delegate-work",
            "Brief: Offshore wind added 12 GW in 2025.",
            {
                ED: [
                    call(
                        t(
                            "delegate_work_to_coworker",
                            task="Find the 2025 wind figure",
                            context="Use the research notes.",
                            coworker="Researcher",
                        )
                    ),
                    say("Brief: Offshore wind added 12 GW in 2025."),
                ],
                RS: [
                    call(t("search_notes", query="wind")),
                    say("Offshore wind added 12 GW in 2025."),
                ],
            },
            kickoff(delegating("Write a one-line wind brief.")),
            "built-in 'Delegate work to coworker': 1 tool call of the Editor (also recorded as "
            "1 handoff), plus the coworker's own tool call",
        ),
        Case(
            "ask-and-delegate-wrong",
            "Batteries doubled in 2025 (7 words).",
            {
                ED: [
                    call(
                        t(
                            "ask_question_to_coworker",
                            question="What happened to grid batteries in 2025?",
                            context="Newsletter brief.",
                            coworker="Researcher",
                        )
                    ),
                    call(
                        t(
                            "delegate_work_to_coworker",
                            task="Count the words of: Grid batteries doubled in 2025.",
                            context="We need the count for layout.",
                            coworker="Writer",
                        )
                    ),
                    say("Batteries doubled in 2025 (6 words)."),
                ],
                RS: [say("Grid batteries doubled in 2025.")],
                WT: [call(t("word_count", text="Grid batteries doubled in 2025.")), say("5")],
            },
            kickoff(delegating("Write a battery brief with its word count.")),
            "built-in 'Ask question to coworker' then 'Delegate work to coworker': 2 tool calls "
            "of the Editor (also 2 handoffs) plus the Writer's word_count; the final answer is "
            "wrong (success false)",
        ),
        Case(
            "hierarchical-manager",
            "Batteries doubled in 2025.",
            {
                MGR: [
                    call(
                        t(
                            "delegate_work_to_coworker",
                            task="Find the battery facts",
                            context="Notes on grid batteries.",
                            coworker="Researcher",
                        )
                    ),
                    call(
                        t(
                            "delegate_work_to_coworker",
                            task="Write one line from: Grid batteries doubled in 2025.",
                            context="One line only.",
                            coworker="Writer",
                        )
                    ),
                    say("Batteries doubled in 2025."),
                ],
                RS: [
                    call(t("search_notes", query="classified battery report")),
                    call(t("search_notes", query="battery")),
                    say("Grid batteries doubled in 2025."),
                ],
                WT: [say("Batteries doubled in 2025.")],
            },
            kickoff(hierarchical),
            "Process.hierarchical: crewai's built-in 'Crew Manager' agent delegates twice (2 "
            "tool calls of the manager, also 2 handoffs); the Researcher's first tool call "
            "raises and it recovers",
        ),
        Case(
            "planning-crew",
            "Solar capacity grew 30% in 2025.",
            {
                PLN: [call(t("PlannerTaskPydanticOutput", **PLAN))],
                RS: [call(t("search_notes", query="solar")), say("Solar capacity grew 30%.")],
                WT: [say("Solar capacity grew 30% in 2025.")],
            },
            kickoff(planned),
            "Crew(planning=True): crewai's built-in 'Task Execution Planner' makes a structured "
            "(instructor, forced tool call) model call before the tasks",
        ),
        Case(
            "delegate-coworker-fails",
            "No wind figure available today.",
            {
                ED: [
                    call(
                        t(
                            "delegate_work_to_coworker",
                            task="Find the 2025 wind figure",
                            context="Use the research notes.",
                            coworker="Researcher",
                        )
                    ),
                    say("No wind figure available today."),
                ],
                RS: [bad_request("Invalid 'messages': scripted 400")],
            },
            kickoff(delegating("Write a one-line wind brief.")),
            "the coworker's model call fails (400); the delegation tool returns the error text "
            "(not a tool error: the tool does not raise) and the Editor still answers (1 tool "
            "call, 1 handoff, 1 llm error, success true)",
        ),
        Case(
            "writer-model-error",
            solar,
            {
                RS: [call(t("search_notes", query="solar")), say("Solar +30%.")],
                WT: [bad_request("Invalid 'messages': scripted 400")],
            },
            kickoff(two_agents),
            "second task's model call fails (400): the exception escapes Crew.kickoff",
        ),
    ]


def cross_check(run: Any, tally: HttpTally) -> list[str]:
    """The truth (counted around litellm.completion) against what the fake server saw."""
    found = []
    if tally.ok != run.llm_calls - run.llm_errors:
        found.append(f"{tally.ok} OK responses for {run.llm_calls - run.llm_errors} OK calls")
    if tally.requests - tally.retries != run.llm_calls:
        found.append(
            f"{tally.requests} requests - {tally.retries} client retries != "
            f"{run.llm_calls} model calls"
        )
    if (tally.input_tokens, tally.output_tokens) != (run.input_tokens, run.output_tokens):
        found.append(
            f"tokens served {tally.input_tokens}/{tally.output_tokens} != "
            f"counted {run.input_tokens}/{run.output_tokens}"
        )
    return found


def instrument(provider: TracerProvider) -> tuple[CrewAIInstrumentor, LiteLLMInstrumentor]:
    crew = CrewAIInstrumentor()
    crew.instrument(tracer_provider=provider)
    lite = LiteLLMInstrumentor()
    lite.instrument(tracer_provider=provider)
    return crew, lite


def main() -> None:
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "crewai Crew/Agent (sequential and hierarchical processes, delegation, planning, "
            "standalone Agent.kickoff) with crewai.LLM(is_litellm=True) -> LiteLLM -> OpenAI "
            "client -> scripted OpenAI-compatible server on 127.0.0.1; "
            "openinference-instrumentation-crewai (default wrapper mode) + "
            "openinference-instrumentation-litellm, OTLP/HTTP protobuf, "
            f"BatchSpanProcessor(max_export_batch_size={BATCH})."
        ),
    )
    groups = [("weather-desk", weather_cases()), ("newsroom", news_cases())]
    problems: list[str] = []
    with rec:
        for service, cases in groups:
            provider = rec.tracer_provider(service_name=service, transport="http", batch_size=BATCH)
            # OpenInference binds its tracer at instrument time: one service per instrumentation
            # period (as two processes would), so re-instrument for the second provider.
            crew_inst, lite_inst = instrument(provider)
            for case in cases:
                FAKE.load(case.scripts)
                with rec.run(provider, task_id=case.task_id, expected_output=case.expected) as run:
                    run.notes = case.notes
                    out = case.runner()
                    run.output = out
                    run.success = out == case.expected
                problems.extend(f"{case.task_id}: {p}" for p in cross_check(run, FAKE.tally))
                if FAKE.tally.requests != run.llm_calls:
                    run.notes += (
                        f" [fake server: {FAKE.tally.requests} HTTP requests for "
                        f"{run.llm_calls} model calls, of which {FAKE.tally.retries} retried by "
                        "the OpenAI client itself]"
                    )
                left = FAKE.leftovers()
                if left:
                    problems.append(f"{case.task_id}: unused scripted turns {left}")
                if FAKE.errors:
                    problems.append(f"{case.task_id}: {FAKE.errors}")
                    FAKE.errors.clear()
            rec.flush()
            crew_inst.uninstrument()
            lite_inst.uninstrument()
    notes = [
        "crewai routes model calls through LiteLLM (`LLM(..., is_litellm=True)`); the LLM spans "
        "are openinference-instrumentation-litellm's `completion` spans "
        "(openinference.span.kind=LLM, llm.token_count.*, llm.cost.total from LiteLLM's cost "
        "map). openinference-instrumentation-crewai (default wrapper mode) makes no LLM spans.",
        "Crew.kickoff -> `<crew name>.kickoff` (CHAIN; `Crew_<uuid>.kickoff` when the crew has "
        "no name); each task -> `<agent role>._execute_core` (AGENT, graph.node.id = role); "
        "Agent.kickoff -> `<role>.kickoff` (AGENT); each tool run -> `<tool name>.run` (TOOL, "
        "tool.name); no tool call id on any span.",
        "Delegation: crewai's built-in tools 'Delegate work to coworker' / 'Ask question to "
        "coworker' are TOOL spans (`Delegate work to coworker.run`) and the coworker's LLM and "
        "tool spans are their children; the coworker gets no AGENT span. They run a coworker "
        "and return its answer to the caller (an agent used as a tool): ground truth counts "
        "each execution as one tool call of the caller (by its tool name, in the tool body) "
        "plus the coworker's own tool calls, and also records it as a handoff (not compared).",
        "Process.hierarchical adds crewai's 'Crew Manager' agent (`Crew Manager._execute_core`); "
        "planning=True adds `Task._execute_core` (the 'Task Execution Planner' task, no role in "
        "the name) with one structured LLM call.",
        "llm_calls counts the model calls crewai makes (a wrapper around litellm.completion), "
        "not HTTP attempts: an HTTP 429 retried by the OpenAI client inside one "
        "litellm.completion call is one model call, and one LLM span (run "
        "rate-limited-then-recovers: 2 calls, 3 HTTP requests). The fake server's per-run HTTP "
        "tally (requests minus the client's x-stainless-retry-count retries, tokens served) "
        "is checked against the truth.",
        "Every span is SpanKind INTERNAL, LLM spans included; nothing below litellm.completion "
        "(the OpenAI client / httpx) is instrumented.",
        "crewai AGENT spans carry `task_id` / `task_key` (crewai's own task UUID and hash), "
        "not the run's task id (`badge.task.id` on the root).",
        "`tool.result_as_answer=true` marks a user tool whose output ends the task (run "
        "report-result-as-answer): a real tool step, counted in the truth.",
        "A raising tool: TOOL span status ERROR + `exception` event, crewai feeds the error to "
        "the model and the task/crew spans stay OK. A failed model call: LLM span ERROR + "
        "`exception` event, no llm.token_count.*. A coworker's failed model call inside a "
        "delegation: LLM span ERROR under an OK delegation TOOL span (run "
        "delegate-coworker-fails).",
    ]
    problems.extend(LLM_PROBLEMS)
    if NETWORK_VIOLATIONS:
        problems.append(f"network attempts refused: {NETWORK_VIOLATIONS}")
    rec.finish(
        packages=[
            "crewai",
            "litellm",
            "openai",
            "openinference-instrumentation-crewai",
            "openinference-instrumentation-litellm",
            "openinference-instrumentation",
            "openinference-semantic-conventions",
        ],
        notes=notes,
    )
    if problems:
        print("RECORDING PROBLEMS:\n  " + "\n  ".join(problems), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

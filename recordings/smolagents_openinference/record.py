"""Record smolagents + openinference-instrumentation-smolagents runs with the recording kit.

smolagents' real agents (ToolCallingAgent, CodeAgent, managed sub-agents) run with smolagents'
real `OpenAIModel`, whose OpenAI client is replaced by a scripted fake (`client=` is smolagents'
own extension point for API models): no network. The fake answers `chat.completions.create`
with OpenAI-shaped responses (tool calls, code, usage.prompt_tokens/completion_tokens, and the
streamed variant with a final usage chunk), so smolagents builds its ChatMessage/TokenUsage and
openinference builds its LLM spans exactly as with the real provider.

Ground truth is counted in code: tool bodies entered (`current().tool`), model calls
(`current().llm` / `llm_error` in the fake client), managed-agent delegations (`current().handoff`
in the sub-agent's `__call__`). The built-in `final_answer` tool is NOT a user tool: it is not
counted.

Run: /work/envs/smolagents_openinference/bin/python recordings/smolagents_openinference/record.py
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Recording, current  # noqa: E402
from openinference.instrumentation.smolagents import SmolagentsInstrumentor  # noqa: E402
from smolagents import (  # noqa: E402
    CodeAgent,
    LogLevel,
    OpenAIModel,
    ToolCallingAgent,
    tool,
)

SCENARIO = "smolagents_openinference"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
MODEL_ID = "gpt-4.1-mini"
BATCH = 6
QUIET = LogLevel.ERROR

# --------------------------------------------------------------------------------------------
# Scripted OpenAI client
# --------------------------------------------------------------------------------------------


class UpstreamError(Exception):
    """What the OpenAI SDK raises on a 5xx (not a rate limit: smolagents does not retry it)."""


@dataclass
class Turn:
    """One scripted model response: text content and/or tool calls, or an error."""

    content: str | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None


def say(content: str) -> Turn:
    return Turn(content=content)


def call(*calls: tuple[str, dict[str, Any]]) -> Turn:
    return Turn(calls=list(calls))


def t(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    return (name, arguments)


def fail(message: str) -> Turn:
    return Turn(error=message)


def code(body: str, thought: str = "I will write code for this.") -> Turn:
    """A CodeAgent answer; the closing tag is a stop sequence, so a real API never returns it."""
    return Turn(content=f"Thought: {thought}\n<code>\n{body.strip()}\n</code>")


def _count_tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


class ScriptedCompletions:
    """`client.chat.completions`: pops the next Turn and answers like the OpenAI API."""

    def __init__(self, name: str, turns: list[Turn]):
        self.name = name
        self.turns = list(turns)
        self.call_index = 0

    def create(self, **kwargs: Any) -> Any:
        if not self.turns:
            raise AssertionError(f"{self.name}: script exhausted at call {self.call_index}")
        turn = self.turns.pop(0)
        self.call_index += 1
        if turn.error is not None:
            current().llm_error()
            raise UpstreamError(f"Error code: 503 - {turn.error}")
        content = turn.content
        for stop in kwargs.get("stop") or []:
            if content is not None and stop in content:
                content = content.split(stop)[0]
        tool_calls = [
            {
                "id": f"call_{self.name}_{self.call_index}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(turn.calls)
        ]
        prompt = json.dumps(kwargs.get("messages", []), default=str)
        if kwargs.get("tools"):
            prompt += json.dumps(kwargs["tools"], default=str)
        prompt_tokens = _count_tokens(prompt)
        completion_tokens = _count_tokens((content or "") + json.dumps(tool_calls))
        current().llm(input_tokens=prompt_tokens, output_tokens=completion_tokens)
        usage = SimpleNamespace(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        if kwargs.get("stream"):
            return self._stream(content or "", usage)
        message = SimpleNamespace(role="assistant", content=content, tool_calls=tool_calls or None)
        return SimpleNamespace(
            id=f"chatcmpl-{self.name}-{self.call_index}",
            model=MODEL_ID,
            choices=[SimpleNamespace(index=0, message=message, finish_reason="stop")],
            usage=usage,
        )

    @staticmethod
    def _stream(content: str, usage: Any) -> Iterator[Any]:
        """Chunks of ~24 characters, a finish chunk, then the usage-only chunk (include_usage)."""
        for start in range(0, len(content), 24):
            delta = SimpleNamespace(content=content[start : start + 24], tool_calls=None)
            choice = SimpleNamespace(index=0, delta=delta, finish_reason=None)
            yield SimpleNamespace(choices=[choice], usage=None)
        done = SimpleNamespace(index=0, delta=None, finish_reason="stop")
        yield SimpleNamespace(choices=[done], usage=None)
        yield SimpleNamespace(choices=[], usage=usage)


def scripted_model(name: str, turns: list[Turn]) -> OpenAIModel:
    client = SimpleNamespace(chat=SimpleNamespace(completions=ScriptedCompletions(name, turns)))
    return OpenAIModel(model_id=MODEL_ID, client=client)


# --------------------------------------------------------------------------------------------
# Tools (every body counts itself first)
# --------------------------------------------------------------------------------------------

WEATHER = {
    "Paris": 18,
    "Rome": 24,
    "Oslo": 4,
    "Berlin": 15,
    "Madrid": 27,
    "Lisbon": 22,
    "Vienna": 16,
    "Prague": 14,
}
POPULATION = {"Paris": 2_100_000, "Berlin": 3_700_000, "Rome": 2_800_000, "Lyon": 522_000}


@tool
def get_weather(city: str) -> str:
    """Current temperature in a city.

    Args:
        city: The city name, e.g. Paris.
    """
    current().tool("get_weather")
    return f"{WEATHER.get(city, 10)}C"


@tool
def lookup_population(city: str) -> int:
    """Population of a city.

    Args:
        city: The city name.
    """
    current().tool("lookup_population")
    return POPULATION.get(city, 1_000_000)


@tool
def convert_currency(amount: float, source: str, target: str) -> float:
    """Convert an amount between currencies.

    Args:
        amount: The amount to convert.
        source: ISO code of the source currency.
        target: ISO code of the target currency.
    """
    current().tool("convert_currency")
    rates = {"EUR": 1.08, "GBP": 1.27, "USD": 1.0}
    return round(amount * rates[source] / rates[target], 2)


@tool
def search_flights(origin: str, destination: str) -> str:
    """Search direct flights between two airports.

    Args:
        origin: IATA code of the departure airport.
        destination: IATA code of the arrival airport.
    """
    current().tool("search_flights")
    known = {"CDG", "FCO", "LHR", "OSL"}
    if origin not in known or destination not in known:
        current().tool_error()
        raise ValueError(f"unknown airport code {destination if origin in known else origin}")
    return f"AF1234 {origin}->{destination} 09:40"


@tool
def get_local_time(city: str) -> str:
    """Local time in a city (the service is flaky and often answers 'unknown').

    Args:
        city: The city name.
    """
    current().tool("get_local_time")
    return "unknown (time service degraded)"


@tool
def fetch_sales(region: str) -> int:
    """Quarterly sales of a region, in kEUR.

    Args:
        region: One of EMEA, APAC, AMER.
    """
    current().tool("fetch_sales")
    sales = {"EMEA": 410, "APAC": 275, "AMER": 530}
    if region not in sales:
        current().tool_error()
        raise KeyError(f"no such region: {region}")
    return sales[region]


@tool
def web_search(query: str) -> str:
    """Search the web and return the top snippet.

    Args:
        query: The search query.
    """
    current().tool("web_search")
    snippets = {
        "eiffel": "The Eiffel Tower is 330 m tall.",
        "tokyo": "Tokyo Tower is 333 m tall.",
        "lyon": "Lyon has a population of 522,000 (2021).",
    }
    for key, text in snippets.items():
        if key in query.lower():
            return text
    return "No result."


@tool
def calculator(expression: str) -> float:
    """Evaluate an arithmetic expression.

    Args:
        expression: e.g. '333 - 330'.
    """
    current().tool("calculator")
    allowed = set("0123456789+-*/(). ")
    if not set(expression) <= allowed:
        current().tool_error()
        raise ValueError("only arithmetic is allowed")
    return float(eval(expression))  # noqa: S307 - digits and operators only


TRIP_TOOLS = [get_weather, convert_currency, search_flights, get_local_time, lookup_population]
DATA_TOOLS = [get_weather, lookup_population, fetch_sales]


# --------------------------------------------------------------------------------------------
# Agents
# --------------------------------------------------------------------------------------------


class ResearchSubAgent(ToolCallingAgent):
    """A managed agent; its manager calling it is a handoff (delegation), not a tool step."""

    def __call__(self, task: str, **kwargs: Any) -> Any:
        current().handoff()
        return super().__call__(task, **kwargs)


def researcher(turns: list[Turn]) -> ResearchSubAgent:
    return ResearchSubAgent(
        tools=[web_search],
        model=scripted_model("web_researcher", turns),
        name="web_researcher",
        description="Searches the web for facts. Give it a precise question as `task`.",
        max_steps=4,
        verbosity_level=QUIET,
    )


def tc_agent(turns: list[Turn], **kwargs: Any) -> ToolCallingAgent:
    return ToolCallingAgent(
        tools=TRIP_TOOLS,
        model=scripted_model("trip_planner", turns),
        name="trip_planner",
        verbosity_level=QUIET,
        **kwargs,
    )


def code_agent(turns: list[Turn], **kwargs: Any) -> CodeAgent:
    return CodeAgent(
        tools=DATA_TOOLS,
        model=scripted_model("data_analyst", turns),
        name="data_analyst",
        verbosity_level=QUIET,
        **kwargs,
    )


@dataclass
class Task:
    task_id: str
    prompt: str
    expected: str
    build: Callable[[], Any]
    notes: str = ""


def fa(answer: Any) -> Turn:
    return call(t("final_answer", answer=answer))


TRIP_TASKS = [
    Task(
        "tc-direct-answer",
        "What is 2 + 2?",
        "4",
        lambda: tc_agent([fa("4")]),
        "0 user tools: the model answers at once through the built-in final_answer tool",
    ),
    Task(
        "tc-weather-paris",
        "What is the temperature in Paris?",
        "18C",
        lambda: tc_agent([call(t("get_weather", city="Paris")), fa("18C")]),
        "1 tool, then final_answer",
    ),
    Task(
        "tc-parallel-weather",
        "Which of Paris, Rome and Oslo is warmest right now?",
        "Rome",
        lambda: tc_agent(
            [
                call(
                    t("get_weather", city="Paris"),
                    t("get_weather", city="Rome"),
                    t("get_weather", city="Oslo"),
                ),
                fa("Rome"),
            ]
        ),
        "3 parallel tool calls in one model response (smolagents runs them in a thread pool)",
    ),
    Task(
        "tc-currency-compare",
        "Is 100 EUR or 100 GBP worth more in USD? Answer with the currency code.",
        "GBP",
        lambda: tc_agent(
            [
                call(t("convert_currency", amount=100, source="EUR", target="USD")),
                call(t("convert_currency", amount=100, source="GBP", target="USD")),
                fa("GBP"),
            ]
        ),
        "2 sequential tool calls",
    ),
    Task(
        "tc-flight-tool-error",
        "Find a direct flight from Paris CDG to Rome. Answer with the flight number.",
        "AF1234",
        lambda: tc_agent(
            [
                call(t("search_flights", origin="CDG", destination="ROM")),
                call(t("search_flights", origin="CDG", destination="FCO")),
                fa("AF1234"),
            ]
        ),
        "first tool call raises (unknown airport), the agent recovers with a corrected call",
    ),
    Task(
        "tc-wrong-answer",
        "What is the temperature in Oslo?",
        "4C",
        lambda: tc_agent([call(t("get_weather", city="Oslo")), fa("25C")]),
        "wrong final answer",
    ),
    Task(
        "tc-seven-tools",
        "Among Paris, Berlin, Rome, Madrid, which of the three largest is coolest?",
        "Berlin",
        lambda: tc_agent(
            [
                call(
                    t("get_weather", city="Paris"),
                    t("get_weather", city="Berlin"),
                    t("get_weather", city="Rome"),
                    t("get_weather", city="Madrid"),
                ),
                call(
                    t("lookup_population", city="Paris"),
                    t("lookup_population", city="Berlin"),
                    t("lookup_population", city="Rome"),
                ),
                fa("Berlin"),
            ]
        ),
        "7 tools in 2 parallel batches (4 + 3)",
    ),
    Task(
        "tc-max-steps",
        "What time is it in Tokyo?",
        "14:05",
        lambda: tc_agent(
            [
                call(t("get_local_time", city="Tokyo")),
                call(t("get_local_time", city="Tokyo")),
                call(t("get_local_time", city="Tokyo")),
                call(t("get_local_time", city="Tokyo")),
                say("I could not determine the local time in Tokyo."),
            ],
            max_steps=4,
        ),
        "max_steps=4 reached: smolagents makes one extra model call (provide_final_answer, "
        "outside any Step span) and returns its text; wrong answer, no exception",
    ),
    Task(
        "tc-model-error",
        "What is the temperature in Paris in Fahrenheit?",
        "64F",
        lambda: tc_agent([call(t("get_weather", city="Paris")), fail("upstream overloaded")]),
        "the second model call fails (HTTP 503): AgentGenerationError escapes agent.run",
    ),
    Task(
        "tc-planning",
        "Plan a day in Madrid: the temperature and the price of 50 EUR in USD.",
        "27C, 54.0 USD",
        lambda: tc_agent(
            [
                say("1. Get the weather in Madrid.\n2. Convert 50 EUR to USD.\n<end_plan>"),
                call(t("get_weather", city="Madrid")),
                call(t("convert_currency", amount=50, source="EUR", target="USD")),
                say("All facts are known. Give the final answer.\n<end_plan>"),
                fa("27C, 54.0 USD"),
            ],
            planning_interval=2,
        ),
        "built-in planning (planning_interval=2): 2 planning model calls outside Step spans",
    ),
]

DATA_TASKS = [
    Task(
        "code-pure-python",
        "What is the sum of the integers from 1 to 10?",
        "55",
        lambda: code_agent([code("total = sum(range(1, 11))\nfinal_answer(total)")]),
        "0 user tools: plain Python then final_answer() in code",
    ),
    Task(
        "code-loop-five",
        "Which of Paris, Rome, Oslo, Lisbon, Vienna is warmest?",
        "Rome",
        lambda: code_agent(
            [
                code(
                    "temps = {}\n"
                    "for c in ['Paris', 'Rome', 'Oslo', 'Lisbon', 'Vienna']:\n"
                    "    temps[c] = int(get_weather(city=c).rstrip('C'))\n"
                    "print(temps)"
                ),
                code("final_answer(max(temps, key=temps.get))", "Rome is warmest."),
            ]
        ),
        "5 tool calls from one code block (a loop), then final_answer in the next step",
    ),
    Task(
        "code-tool-error",
        "Total sales of EMEA and APAC?",
        "685",
        lambda: code_agent(
            [
                code("print(fetch_sales(region='Europe'))"),
                code(
                    "total = fetch_sales(region='EMEA') + fetch_sales(region='APAC')\n"
                    "final_answer(total)",
                    "The region code is EMEA.",
                ),
            ]
        ),
        "a tool raises inside the code (step error, Step span ERROR); the agent recovers",
    ),
    Task(
        "code-streaming-six",
        "Total population of Paris, Berlin and Rome, and their temperatures?",
        "8600000",
        lambda: code_agent(
            [
                code(
                    "pops = [lookup_population(city=c) for c in ['Paris', 'Berlin', 'Rome']]\n"
                    "temps = [get_weather(city=c) for c in ['Paris', 'Berlin', 'Rome']]\n"
                    "print(sum(pops), temps)"
                ),
                code("final_answer(sum(pops))"),
            ],
            stream_outputs=True,
        ),
        "stream_outputs=True (OpenAIModel.generate_stream, usage in the last chunk); 6 tools",
    ),
    Task(
        "code-model-error",
        "Sales of AMER?",
        "530",
        lambda: code_agent([fail("upstream overloaded")]),
        "the first model call fails: AgentGenerationError escapes, 0 tools",
    ),
]


def manager_tc_with_sub() -> ToolCallingAgent:
    sub = researcher(
        [
            call(
                t("web_search", query="Eiffel Tower height"),
                t("web_search", query="Tokyo Tower height"),
            ),
            fa("Eiffel Tower: 330 m; Tokyo Tower: 333 m"),
        ]
    )
    return ToolCallingAgent(
        tools=[calculator],
        managed_agents=[sub],
        model=scripted_model(
            "research_manager",
            [
                call(t("web_researcher", task="Heights of the Eiffel Tower and Tokyo Tower?")),
                call(t("calculator", expression="333 - 330")),
                fa("3"),
            ],
        ),
        name="research_manager",
        verbosity_level=QUIET,
    )


def manager_code_sub_fails() -> CodeAgent:
    sub = researcher([fail("upstream overloaded")])
    return CodeAgent(
        tools=[web_search, calculator],
        managed_agents=[sub],
        model=scripted_model(
            "research_manager",
            [
                code("print(web_researcher(task='Population of Lyon?'))"),
                code(
                    "print(web_search(query='population of Lyon'))",
                    "The researcher failed; I search myself.",
                ),
                code("final_answer('522000')"),
            ],
        ),
        name="research_manager",
        verbosity_level=QUIET,
    )


def manager_tc_sub_no_tools_wrong() -> ToolCallingAgent:
    sub = researcher([fa("Mont Blanc is 4,200 m high.")])
    return ToolCallingAgent(
        tools=[calculator],
        managed_agents=[sub],
        model=scripted_model(
            "research_manager",
            [
                call(t("web_researcher", task="How high is Mont Blanc?")),
                fa("4200 m"),
            ],
        ),
        name="research_manager",
        verbosity_level=QUIET,
    )


def manager_tc_sub_recovers() -> ToolCallingAgent:
    sub = researcher(
        [
            call(t("web_search", query="Lyon population")),
            fa("Lyon: 522,000 inhabitants"),
        ]
    )
    return ToolCallingAgent(
        tools=[calculator],
        managed_agents=[sub],
        model=scripted_model(
            "research_manager",
            [
                call(
                    t("calculator", expression="__import__('os')"),
                    t("web_researcher", task="Population of Lyon?"),
                ),
                call(t("calculator", expression="522000 * 2")),
                fa("1044000"),
            ],
        ),
        name="research_manager",
        verbosity_level=QUIET,
    )


RESEARCH_TASKS = [
    Task(
        "mgr-subagent-heights",
        "How much taller is Tokyo Tower than the Eiffel Tower, in metres?",
        "3",
        manager_tc_with_sub,
        "ToolCallingAgent manager delegates to a managed ToolCallingAgent (2 parallel "
        "web_search), then uses its own calculator tool",
    ),
    Task(
        "mgr-code-subagent-fails",
        "Population of Lyon?",
        "522000",
        manager_code_sub_fails,
        "CodeAgent manager calls the managed agent from code; the sub-agent's model call "
        "fails (AgentGenerationError inside the sub-agent), the manager recovers with web_search",
    ),
    Task(
        "mgr-subagent-wrong",
        "How high is Mont Blanc?",
        "4806 m",
        manager_tc_sub_no_tools_wrong,
        "managed agent answers without tools; wrong final answer",
    ),
    Task(
        "mgr-parallel-delegation-tool-error",
        "Twice the population of Lyon?",
        "1044000",
        manager_tc_sub_recovers,
        "one manager response with 2 parallel calls: a tool that raises (calculator rejects "
        "the expression) and a managed-agent delegation; then a good calculator call",
    ),
]

GROUPS = [
    ("trip-planner", TRIP_TASKS),
    ("data-analyst", DATA_TASKS),
    ("research-manager", RESEARCH_TASKS),
]


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT  # another folder for trial runs
    rec = Recording(
        scenario=SCENARIO,
        out=out,
        description=(
            "smolagents ToolCallingAgent / CodeAgent / managed agents with smolagents' real "
            "OpenAIModel over a scripted OpenAI client (no network), instrumented by "
            "openinference-instrumentation-smolagents, OTLP/HTTP protobuf, "
            f"BatchSpanProcessor(max_export_batch_size={BATCH}); one service per agent group."
        ),
    )
    instrumentor = SmolagentsInstrumentor()
    with rec:
        for service, tasks in GROUPS:
            provider = rec.tracer_provider(service_name=service, transport="http", batch_size=BATCH)
            instrumentor.instrument(tracer_provider=provider)
            for task in tasks:
                with rec.run(provider, task_id=task.task_id, expected_output=task.expected) as run:
                    run.notes = task.notes
                    agent = task.build()
                    out = agent.run(task.prompt)
                    run.output = str(out)
                    run.success = str(out) == task.expected
            rec.flush()
            instrumentor.uninstrument()
    rec.finish(
        packages=[
            "smolagents",
            "openinference-instrumentation-smolagents",
            "openinference-instrumentation",
            "openinference-semantic-conventions",
            "opentelemetry-instrumentation",
            "opentelemetry-semantic-conventions",
        ],
        notes=[
            "Tools: openinference TOOL spans (openinference.span.kind=TOOL) named after the Tool "
            "class (`SimpleTool` for every @tool function, `FinalAnswerTool` for the built-in "
            "final_answer); the tool is identified by `tool.name` only. No tool call id on TOOL "
            "spans (the ids are only in the LLM span's llm.output_messages...tool_call.id).",
            "The built-in final_answer tool (tool.name=final_answer, `FinalAnswerTool`) only hands "
            "the answer back: NOT counted in tool_calls. One per agent run that answers through "
            "it, sub-agents included; none when max_steps is reached (run tc-max-steps).",
            "Managed-agent delegations are counted as handoffs (not tool steps): smolagents calls "
            "the sub-agent directly, openinference emits only its AGENT span `<name>.run` under "
            "the manager's `Step N` CHAIN span (no TOOL span for the delegation).",
            "LLM spans: `OpenAIModel.generate` / `OpenAIModel.generate_stream` "
            "(openinference.span.kind=LLM, llm.token_count.*, llm.model_name, llm.provider). "
            "Planning calls and the max-steps `provide_final_answer` call are children of the "
            "AGENT span, outside any Step span. A failed call: LLM span ERROR, no token counts.",
            "AGENT spans `<agent name>.run` carry llm.token_count.* = that agent's run totals "
            "(agent.monitor), i.e. the sum of its own LLM spans: must not be added again.",
            "openinference bug: when an exception escapes agent.run, the AGENT span is never "
            "ended (so never exported) and its context is not detached: runs tc-model-error and "
            "code-model-error have `Step N` spans whose parent was never recorded; in "
            "mgr-code-subagent-fails the failed sub-agent's Step/LLM spans are orphans too.",
            "Step spans (CHAIN) of a step whose tool raised are ERROR with two `exception` events "
            "even though the agent recovered (the `agent.step_recovery` event path of "
            "_record_step_error is never reached).",
        ],
    )


if __name__ == "__main__":
    main()

"""Record google-adk agents with ADK's native OpenTelemetry spans (scenario `google_adk`).

Run: /work/envs/google_adk/bin/python recordings/google_adk/record.py
Writes tests/fixtures/recordings/google_adk/ (payloads/, expected.json, spans_summary.md).

A scripted model (a BaseLlm subclass: no network) answers each agent from a per-run script;
tool functions count ground truth in their bodies; a runner plugin counts what has no body of
ours (agent-as-tool calls, ADK's load_memory, handoffs through transfer_to_agent, control tools).
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import trace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from google.adk.agents import LlmAgent, LoopAgent  # noqa: E402
from google.adk.events.event import Event  # noqa: E402
from google.adk.models.base_llm import BaseLlm  # noqa: E402
from google.adk.models.llm_request import LlmRequest  # noqa: E402
from google.adk.models.llm_response import LlmResponse  # noqa: E402
from google.adk.plugins.base_plugin import BasePlugin  # noqa: E402
from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin  # noqa: E402
from google.adk.runners import InMemoryRunner  # noqa: E402
from google.adk.tools.agent_tool import AgentTool  # noqa: E402
from google.adk.tools.base_tool import BaseTool  # noqa: E402
from google.adk.tools.exit_loop_tool import exit_loop  # noqa: E402
from google.adk.tools.load_memory_tool import load_memory_tool  # noqa: E402
from google.adk.tools.tool_context import ToolContext  # noqa: E402
from google.adk.workflow import START, Workflow  # noqa: E402
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types  # noqa: E402
from kit import Recording, current  # noqa: E402
from pydantic import BaseModel  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests/fixtures/recordings/google_adk"
MODEL_NAME = "scripted-flash"
APP = "travel-desk"
USER = "user-1"

# -- the scripted model -------------------------------------------------------------------------


@dataclass
class Fail:
    """A model call that fails the way the Gemini API does (google.genai ServerError)."""

    code: int = 503
    message: str = "The model is overloaded. Please try again later."


Call = tuple[str, dict[str, Any]]
Step = str | list[Call] | Fail
SCRIPTS: dict[str, list[Step]] = {}  # agent key -> its model responses for the run in progress


class ScriptedLlm(BaseLlm):
    """Answers from SCRIPTS[script_key]; reports usage like Gemini (usage_metadata)."""

    script_key: str

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        queue = SCRIPTS.get(self.script_key)
        if not queue:
            raise RuntimeError(f"script for {self.script_key} exhausted")
        step = queue.pop(0)
        prompt_tokens = 40 + 12 * len(llm_request.contents)
        if isinstance(step, Fail):
            current().llm_error()  # the provider reports no usage for a failed call
            raise genai_errors.ServerError(
                step.code,
                {"error": {"code": step.code, "message": step.message, "status": "UNAVAILABLE"}},
            )
        if isinstance(step, str):
            parts = [types.Part(text=step)]
            output_tokens = 4 + len(step.split())
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(name=name, args=args))
                for name, args in step
            ]
            output_tokens = 6 + 9 * len(step)
        current().llm(input_tokens=prompt_tokens, output_tokens=output_tokens)
        await asyncio.sleep(0.003)
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt_tokens,
                candidates_token_count=output_tokens,
                total_token_count=prompt_tokens + output_tokens,
            ),
            finish_reason=types.FinishReason.STOP,
            model_version=MODEL_NAME,
        )


def model(key: str) -> ScriptedLlm:
    return ScriptedLlm(model=MODEL_NAME, script_key=key)


# -- tools (ground truth counted in the bodies) -------------------------------------------------

WEATHER = {"Paris": 18, "Rome": 24, "Oslo": 4, "Lisbon": 21, "Berlin": 12, "Madrid": 26}
FLIGHTS = {("LIS", "ROM"): 120.0, ("ROM", "LIS"): 135.0}
RATES = {"USD": 1.1, "GBP": 0.85, "CHF": 0.95}


def get_weather(city: str) -> dict[str, Any]:
    """Current weather for a city."""
    current().tool("get_weather")
    return {"city": city, "temp_c": WEATHER[city], "sky": "clear"}


def get_flight_price(origin: str, destination: str) -> dict[str, Any]:
    """Cheapest one-way flight price in EUR between two airports."""
    current().tool("get_flight_price")
    return {"origin": origin, "destination": destination, "eur": FLIGHTS[(origin, destination)]}


def get_hotel_price(city: str, nights: int) -> dict[str, Any]:
    """Hotel price in EUR for a stay."""
    current().tool("get_hotel_price")
    return {"city": city, "nights": nights, "eur": 95.0 * nights}


def convert_currency(amount: float, currency: str) -> dict[str, Any]:
    """Convert an amount in EUR to another currency."""
    current().tool("convert_currency")
    if currency not in RATES:
        current().tool_error()
        raise ValueError(f"unknown currency {currency!r}")
    return {"amount": round(amount * RATES[currency], 2), "currency": currency}


def book_hotel(city: str, nights: int) -> dict[str, Any]:
    """Book a hotel."""
    current().tool("book_hotel")
    if nights > 14:
        current().tool_error()
        raise RuntimeError(f"cannot book {nights} nights in {city}")
    return {"booking": f"{city}-{nights}", "status": "confirmed"}


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order."""
    current().tool("lookup_order")
    return {"order_id": order_id, "total_eur": 42.0, "status": "delivered"}


def refund_order(order_id: str) -> dict[str, Any]:
    """Refund an order."""
    current().tool("refund_order")
    return {"order_id": order_id, "refunded_eur": 42.0}


def search_docs(query: str) -> dict[str, Any]:
    """Search the travel knowledge base."""
    current().tool("search_docs")
    return {"query": query, "hits": [f"{query}: see section 4"]}


def word_count(text: str) -> dict[str, Any]:
    """Count the words of a text."""
    current().tool("word_count")
    return {"words": len(text.split())}


def lookup_price(item: str) -> dict[str, Any]:
    """Price of a shop item in EUR."""
    current().tool("lookup_price")
    return {"item": item, "eur": 4.75}


class Quote(BaseModel):
    item: str
    price_eur: float


# -- what has no tool body of ours --------------------------------------------------------------

CONTROL_TOOLS = {"exit_loop", "set_model_response", "finish_task"}  # flow control, not steps


class GroundTruthPlugin(BasePlugin):
    """Counts tool calls whose body is ADK's: agent-as-tool and load_memory are tool calls
    (they do work and return a result); transfer_to_agent is a handoff; control tools are noted.
    """

    def __init__(self) -> None:
        super().__init__(name="ground_truth")
        self.control: Counter[str] = Counter()

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if tool.name == "transfer_to_agent":
            current().handoff()
        elif isinstance(tool, AgentTool) or tool.name == "load_memory":
            current().tool(tool.name)
        elif tool.name in CONTROL_TOOLS:
            self.control[tool.name] += 1
        return None


# -- agents ---------------------------------------------------------------------------------------


def travel_agent(tools: list[Any] | None = None, **kwargs: Any) -> LlmAgent:
    return LlmAgent(
        name="travel_agent",
        model=model("travel"),
        description="Travel desk assistant",
        instruction="You help travellers with weather, flights, hotels and money.",
        tools=tools if tools is not None else [get_weather],
        **kwargs,
    )


def billing_agent() -> LlmAgent:
    return LlmAgent(
        name="billing_agent",
        model=model("billing"),
        description="Handles orders, refunds and invoices.",
        instruction="You handle billing questions. Transfer anything else back.",
        tools=[lookup_order, refund_order],
    )


def support_desk() -> LlmAgent:
    """Root agent with a chat sub-agent reached through ADK's transfer_to_agent."""
    return travel_agent(tools=[get_weather], sub_agents=[billing_agent()])


def research_desk() -> LlmAgent:
    """Agent-as-tool: an explicit AgentTool around a researcher with its own tool."""
    researcher = LlmAgent(
        name="researcher",
        model=model("researcher"),
        description="Researches travel rules in the knowledge base.",
        instruction="Search the knowledge base and summarise.",
        tools=[search_docs],
    )
    return travel_agent(tools=[get_weather, AgentTool(agent=researcher)])


def summary_desk() -> LlmAgent:
    """Agent-as-tool, ADK 2.x way: a sub-agent in mode='single_turn' is exposed as a tool."""
    summarizer = LlmAgent(
        name="summarizer",
        model=model("summarizer"),
        description="Summarises a text in one sentence.",
        instruction="Summarise the request in one sentence.",
        mode="single_turn",
    )
    return travel_agent(tools=[get_weather], sub_agents=[summarizer])


def memory_desk() -> LlmAgent:
    return travel_agent(tools=[load_memory_tool, get_weather])


def refine_loop() -> LoopAgent:
    writer = LlmAgent(
        name="writer",
        model=model("writer"),
        description="Writes a travel blurb.",
        instruction="Write or shorten the blurb.",
        output_key="draft",
    )
    critic = LlmAgent(
        name="critic",
        model=model("critic"),
        description="Checks the blurb length.",
        instruction="Count the words; call exit_loop when it has at most 8 words.",
        tools=[word_count, exit_loop],
    )
    return LoopAgent(name="refine_loop", sub_agents=[writer, critic], max_iterations=3)


def format_plan(node_input: str) -> str:
    """A plain function node of the workflow (not a tool)."""
    return f"PLAN: {node_input}"


def day_pipeline() -> Workflow:
    """ADK 2.x graph Workflow (the replacement of Sequential/LoopAgent): agent -> function."""
    planner = LlmAgent(
        name="planner",
        model=model("planner"),
        description="Plans a day out.",
        instruction="Plan one activity for the day, checking the weather.",
        tools=[get_weather],
    )
    return Workflow(name="day_pipeline", edges=[(START, planner, format_plan)])


def quote_agent() -> LlmAgent:
    """Structured output together with tools: ADK adds its set_model_response tool."""
    return LlmAgent(
        name="quote_agent",
        model=model("quote"),
        description="Quotes shop prices.",
        instruction="Quote the price of the item.",
        tools=[lookup_price],
        output_schema=Quote,
    )


# -- runs ---------------------------------------------------------------------------------------


@dataclass
class Task:
    task_id: str
    build: Any
    prompt: str
    scripts: dict[str, list[Step]]
    expected: str
    notes: str = ""
    retry_plugin: bool = False
    memory: list[str] = field(default_factory=list)  # earlier user turns put into memory


def call(name: str, **args: Any) -> Call:
    return (name, args)


TASKS = [
    Task(
        "weather-paris",
        travel_agent,
        "Weather in Paris?",
        {"travel": [[call("get_weather", city="Paris")], "Paris: 18C, clear"]},
        "Paris: 18C, clear",
        "one tool call",
    ),
    Task(
        "chitchat",
        travel_agent,
        "Hi there",
        {"travel": ["Hello! Where would you like to go?"]},
        "Hello! Where would you like to go?",
        "no tool call",
    ),
    Task(
        "warmest-city",
        travel_agent,
        "Which is warmest: Paris, Rome or Oslo?",
        {
            "travel": [
                [
                    call("get_weather", city="Paris"),
                    call("get_weather", city="Rome"),
                    call("get_weather", city="Oslo"),
                ],
                "Rome is warmest (24C)",
            ]
        },
        "Rome is warmest (24C)",
        "three parallel tool calls in one model response (ADK adds `execute_tool (merged)`)",
    ),
    Task(
        "warmest-city",
        travel_agent,
        "Which is warmest: Paris, Rome or Oslo?",
        {
            "travel": [
                [
                    call("get_weather", city="Paris"),
                    call("get_weather", city="Rome"),
                    call("get_weather", city="Oslo"),
                ],
                "Oslo is warmest (4C)",
            ]
        },
        "Rome is warmest (24C)",
        "wrong answer after three parallel tool calls",
    ),
    Task(
        "trip-budget",
        lambda: travel_agent(
            tools=[get_weather, get_flight_price, get_hotel_price, convert_currency]
        ),
        "Lisbon-Rome return, 3 nights: total in USD, GBP and CHF, and the weather?",
        {
            "travel": [
                [
                    call("get_flight_price", origin="LIS", destination="ROM"),
                    call("get_flight_price", origin="ROM", destination="LIS"),
                    call("get_hotel_price", city="Rome", nights=3),
                ],
                [
                    call("convert_currency", amount=540.0, currency="USD"),
                    call("convert_currency", amount=540.0, currency="GBP"),
                    call("convert_currency", amount=540.0, currency="CHF"),
                ],
                [call("get_weather", city="Rome")],
                "540 EUR = 594 USD = 459 GBP = 513 CHF; Rome 24C",
            ]
        },
        "540 EUR = 594 USD = 459 GBP = 513 CHF; Rome 24C",
        "seven tool calls: two batches of three parallel calls, then one",
    ),
    Task(
        "refund-handoff",
        support_desk,
        "Please refund order A17",
        {
            "travel": [[call("transfer_to_agent", agent_name="billing_agent")]],
            "billing": [
                [call("lookup_order", order_id="A17")],
                [call("refund_order", order_id="A17")],
                "Refunded order A17: 42.00 EUR",
            ],
        },
        "Refunded order A17: 42.00 EUR",
        "handoff to a chat sub-agent through ADK's built-in transfer_to_agent",
    ),
    Task(
        "visa-research",
        research_desk,
        "Do I need a visa for Rome, and what's the weather?",
        {
            "travel": [
                [call("researcher", request="visa rules Italy for EU citizens")],
                [call("get_weather", city="Rome")],
                "No visa needed for EU citizens; Rome 24C",
            ],
            "researcher": [
                [
                    call("search_docs", query="visa Italy"),
                    call("search_docs", query="Schengen EU citizens"),
                ],
                "EU citizens need no visa for Italy.",
            ],
        },
        "No visa needed for EU citizens; Rome 24C",
        "agent-as-tool (AgentTool) whose agent makes two parallel tool calls",
    ),
    Task(
        "summarize",
        summary_desk,
        "Summarise: Rome is warm, Oslo is cold, Paris is mild.",
        {
            "travel": [
                [call("summarizer", request="Rome is warm, Oslo is cold, Paris is mild.")],
                "South is warm, north is cold.",
            ],
            "summarizer": ["South is warm, north is cold."],
        },
        "South is warm, north is cold.",
        "agent-as-tool through a sub-agent in mode='single_turn'",
    ),
    Task(
        "fx-retry",
        lambda: travel_agent(tools=[convert_currency]),
        "100 EUR in dollars?",
        {
            "travel": [
                [call("convert_currency", amount=100.0, currency="XYZ")],
                [call("convert_currency", amount=100.0, currency="USD")],
                "100 EUR = 110 USD",
            ]
        },
        "100 EUR = 110 USD",
        "a tool raises; ReflectAndRetryToolPlugin returns the error to the model, which retries",
        retry_plugin=True,
    ),
    Task(
        "long-stay",
        lambda: travel_agent(tools=[get_hotel_price, book_hotel]),
        "Book Rome for 30 nights",
        {
            "travel": [
                [call("get_hotel_price", city="Rome", nights=30)],
                [call("book_hotel", city="Rome", nights=30)],
                "unused",
            ]
        },
        "Booked",
        "a tool raises and nothing handles it: the exception escapes the run",
    ),
    Task(
        "weather-paris",
        travel_agent,
        "Weather in Paris?",
        {"travel": [[call("get_weather", city="Paris")], Fail()]},
        "Paris: 18C, clear",
        "the second model call fails (google.genai ServerError 503): exception escapes",
    ),
    Task(
        "favourite-city",
        memory_desk,
        "What's the weather in my favourite city?",
        {
            "travel": [
                [call("load_memory", query="favourite city")],
                [call("get_weather", city="Lisbon")],
                "Lisbon: 21C, clear",
            ]
        },
        "Lisbon: 21C, clear",
        "ADK's built-in load_memory tool (InMemoryMemoryService)",
        memory=["My favourite city is Lisbon."],
    ),
    Task(
        "blurb",
        refine_loop,
        "Write a short blurb about Rome",
        {
            "writer": [
                "Rome is an eternal city of history, food, art and sunshine for everyone.",
                "Rome: history, food and sunshine.",
            ],
            "critic": [
                [call("word_count", text="Rome is an eternal city of history, food, art")],
                "Too long: 13 words, shorten it.",
                [call("word_count", text="Rome: history, food and sunshine.")],
                [call("exit_loop")],
            ],
        },
        "Rome: history, food and sunshine.",
        "LoopAgent (writer, critic) ended by ADK's built-in exit_loop tool",
    ),
    Task(
        "day-plan",
        day_pipeline,
        "Plan a day in Rome",
        {"planner": [[call("get_weather", city="Rome")], "Colosseum in the morning, 24C"]},
        "PLAN: Colosseum in the morning, 24C",
        "graph Workflow: LLM agent node then a function node (`invoke_node`, not a tool)",
    ),
    Task(
        "quote-cheese",
        quote_agent,
        "How much is the cheese?",
        {
            "quote": [
                [call("lookup_price", item="cheese")],
                [call("set_model_response", item="cheese", price_eur=4.75)],
            ]
        },
        '{"item": "cheese", "price_eur": 4.75}',
        "output_schema with tools: the answer comes through ADK's set_model_response tool",
    ),
    Task(
        "refund-handoff",
        support_desk,
        "Refund order B22, then what's the weather in Madrid?",
        {
            "travel": [
                [call("transfer_to_agent", agent_name="billing_agent")],
                "Madrid: 26C",
            ],
            "billing": [
                [call("lookup_order", order_id="B22")],
                [call("transfer_to_agent", agent_name="travel_agent")],
            ],
        },
        "Refunded order B22: 42.00 EUR; Madrid 26C",
        "two handoffs (to billing_agent and back to travel_agent); wrong answer: no refund made",
    ),
    Task(
        "weather-week",
        travel_agent,
        "Weather in Paris, Rome, Oslo, Lisbon and Berlin, one after the other",
        {
            "travel": [[call("get_weather", city=c)] for c in ["Paris", "Rome", "Oslo", "Lisbon"]]
            + [
                [call("get_weather", city="Berlin")],
                "Paris 18, Rome 24, Oslo 4, Lisbon 21, Berlin 12",
            ]
        },
        "Paris 18, Rome 24, Oslo 4, Lisbon 21, Berlin 12",
        "five sequential tool calls",
    ),
]


def final_text(events: list[Event]) -> str | None:
    for event in reversed(events):
        if isinstance(event.output, str):  # a workflow node's output
            return event.output
        if event.content and event.content.parts:
            texts = [p.text for p in event.content.parts if p.text and not p.thought]
            if texts and event.author != "user":
                return "".join(texts)
    return None


async def drive(task: Task, plugin: GroundTruthPlugin) -> str | None:
    plugins: list[BasePlugin] = [plugin]
    if task.retry_plugin:
        plugins.append(ReflectAndRetryToolPlugin(max_retries=2))
    runner = InMemoryRunner(agent=task.build(), app_name=APP, plugins=plugins)
    if task.memory:
        old = await runner.session_service.create_session(app_name=APP, user_id=USER)
        for text in task.memory:
            await runner.session_service.append_event(
                old,
                Event(
                    author="user", content=types.Content(role="user", parts=[types.Part(text=text)])
                ),
            )
        await runner.memory_service.add_session_to_memory(old)
    session = await runner.session_service.create_session(app_name=APP, user_id=USER)
    events = []
    message = types.Content(role="user", parts=[types.Part(text=task.prompt)])
    async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
        events.append(event)
    await runner.close()
    return final_text(events)


def main() -> int:
    rec = Recording(
        scenario="google_adk",
        out=OUT,
        description=(
            "google-adk LlmAgent / LoopAgent run by InMemoryRunner with a scripted BaseLlm "
            "(no network), ADK's native OpenTelemetry spans (default telemetry schema 2, no "
            "content capture) through the global TracerProvider, OTLP/HTTP protobuf, "
            "BatchSpanProcessor(max_export_batch_size=6)."
        ),
    )
    problems = []
    with rec:
        provider = rec.tracer_provider(service_name=APP, transport="http", batch_size=6)
        trace.set_tracer_provider(provider)  # ADK's tracer is the global one ("gcp.vertex.agent")
        for task in TASKS:
            SCRIPTS.clear()
            SCRIPTS.update({k: list(v) for k, v in task.scripts.items()})
            plugin = GroundTruthPlugin()
            with rec.run(provider, task_id=task.task_id, expected_output=task.expected) as run:
                run.notes = task.notes
                try:
                    run.output = asyncio.run(drive(task, plugin))
                finally:
                    if plugin.control:
                        run.notes += "; control tools: " + ", ".join(
                            f"{k} ×{v}" for k, v in sorted(plugin.control.items())
                        )
                run.success = run.output == task.expected
            left = {k: len(v) for k, v in SCRIPTS.items() if v}
            if left and run.outcome != "exception":
                problems.append(f"{task.task_id}: unused script steps {left}")
            print(
                f"  {task.task_id}: {run.outcome} tools={run.tool_calls} llm={run.llm_calls} "
                f"handoffs={run.handoffs} out={run.output!r} {run.error or ''}",
                file=sys.stderr,
            )
        rec.flush()
    rec.finish(
        packages=["google-adk", "google-genai", "pydantic", "opentelemetry-semantic-conventions"],
        notes=NOTES,
    )
    for problem in problems:
        print("PROBLEM:", problem, file=sys.stderr)
    return 1 if problems else 0


NOTES = [
    "ADK emits its own spans (scope `gcp.vertex.agent`, version = ADK's) through the GLOBAL "
    "tracer provider: the recorder sets the kit's provider with trace.set_tracer_provider before "
    "running (ADK's own maybe_set_otel_providers / OTEL_EXPORTER_OTLP_* path, used by `adk web`, "
    "builds the same TracerProvider + BatchSpanProcessor). Telemetry schema 2 (the default, "
    "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN unset): no `invocation` / `call_llm` spans. Content "
    "capture off (the default): no messages, no tool arguments / results on spans.",
    "Per runner call: `invoke_workflow <root agent>` (gen_ai.operation.name=invoke_workflow, "
    "gen_ai.workflow.name) > `invoke_agent <agent>` (invoke_agent, gen_ai.agent.name, "
    "gen_ai.agent.description, gen_ai.conversation.id = session id) > `generate_content <model>` "
    "per model call and `execute_tool <tool>` per tool call. Every span is INTERNAL: the LLM "
    "spans are not CLIENT.",
    "LLM spans: gen_ai.operation.name=generate_content, gen_ai.request.model, "
    "gen_ai.usage.input_tokens / output_tokens (the model's usage_metadata prompt / candidates "
    "counts), gen_ai.response.finish_reasons, gen_ai.tool.definitions (even with content capture "
    "off), gen_ai.agent.name. gen_ai.provider.name is `gcp.gemini` although the model is a "
    "custom BaseLlm. No gen_ai.response.model, no gen_ai.system.",
    "Tool spans: gen_ai.operation.name=execute_tool, gen_ai.tool.name, gen_ai.tool.description, "
    "gen_ai.tool.type = the ADK class name (FunctionTool, AgentTool, _SingleTurnAgentTool, "
    "TransferToAgentTool, LoadMemoryTool, SetModelResponseTool), gen_ai.tool.call.id = "
    "`adk-<uuid>` (ADK makes the ids: Gemini sends none), gen_ai.agent.name.",
    "Parallel tool calls (several function calls in one model response): one `execute_tool "
    "<tool>` per call plus a sibling `execute_tool (merged)` that starts after them: "
    "gen_ai.operation.name=execute_tool, gen_ai.tool.name = gen_ai.tool.description = "
    "`(merged tools)`, gen_ai.tool.call.id = the merged event id (no `adk-` prefix), no "
    "gen_ai.tool.type, no gen_ai.agent.name, ~0 ms. It is bookkeeping, not a call (runs 2, 3, 4 "
    "×2, 6).",
    "Handoff (chat sub-agent): `execute_tool transfer_to_agent` (TransferToAgentTool) is the "
    "caller's last span; the target's `invoke_agent` then runs as a SIBLING of the caller's "
    "invoke_agent under the same invoke_workflow. No handoff span or attribute (runs 5, 15).",
    "Agent-as-tool: AgentTool gives `execute_tool <agent>` (AgentTool) with a nested "
    "`invoke_workflow <agent>` (gen_ai.workflow.nested=true, its own conversation id) > "
    "invoke_agent > its own generate_content / execute_tool spans (run 6). A sub-agent in "
    "mode='single_turn' gives `execute_tool <agent>` (_SingleTurnAgentTool) and the sub-agent's "
    "invoke_agent as a sibling of that tool span, not its child (run 7); ADK offers that "
    "single-turn agent a transfer_to_agent tool too.",
    "LoopAgent (deprecated in 2.x in favour of Workflow, still common): `invoke_workflow "
    "refine_loop` > `invoke_agent refine_loop` > invoke_agent writer / critic per iteration; "
    "ADK's `exit_loop` is a plain FunctionTool span after which no model call follows (run 12). "
    "Graph Workflow: `invoke_workflow day_pipeline` > `invoke_agent planner` and `invoke_node "
    "format_plan` (gen_ai.operation.name=invoke_node), a function node, not a tool (run 13).",
    "output_schema together with tools: the answer comes as `execute_tool set_model_response` "
    "(SetModelResponseTool); no model call follows it (run 14). load_memory is "
    "`execute_tool load_memory` (LoadMemoryTool) (run 11).",
    "Errors: an unhandled tool exception (run 9) sets the tool span ERROR with error.type = the "
    "exception class and TWO `exception` events on it; invoke_agent and invoke_workflow are "
    "ERROR too. A tool exception handled by ReflectAndRetryToolPlugin (run 8) leaves the tool "
    "span UNSET, no error.type, no event: invisible with content capture off. A failed model "
    "call (google.genai ServerError 503, run 10): generate_content ERROR + `exception` event, no "
    "usage, no error.type.",
    "Ground truth: tool_calls = our tool function bodies entered, plus tools whose body is "
    "ADK's but which do work for the agent: agent-as-tool calls (AgentTool, single_turn "
    "sub-agent) and load_memory (counted in a runner plugin's before_tool_callback). "
    "transfer_to_agent is counted as a handoff, not a tool call. exit_loop and "
    "set_model_response are flow control / final answer, not steps (named in the run notes). "
    "`execute_tool (merged)` is no call. llm_calls / tokens are counted in the scripted BaseLlm.",
]

if __name__ == "__main__":
    raise SystemExit(main())

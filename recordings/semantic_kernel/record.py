"""Record Semantic Kernel (Python) agents with SK's native OpenTelemetry diagnostics.

Semantic Kernel's ChatCompletionAgent, kernel plugins (kernel functions as tools) with automatic
function calling, HandoffOrchestration, GroupChatOrchestration and agent-as-plugin, talking to the
real `OpenAIChatCompletion` connector. The OpenAI SDK client underneath gets an httpx
`MockTransport`: a scripted OpenAI-compatible chat-completions endpoint (JSON and SSE streaming,
tool_calls, usage), so nothing leaves the process. SK's GenAI spans go through the real OTel SDK
(BatchSpanProcessor, small batches) and the real OTLP/HTTP protobuf exporter to the kit's capture
server.

Run: /work/envs/semantic_kernel/bin/python recordings/semantic_kernel/record.py
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

# SK reads its diagnostics switches once, at import time: set them before importing it.
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS"] = "true"
os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402
from kit import Recording, current  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from opentelemetry import trace  # noqa: E402
from semantic_kernel.agents import (  # noqa: E402
    ChatCompletionAgent,
    GroupChatOrchestration,
    HandoffOrchestration,
    OrchestrationHandoffs,
    RoundRobinGroupChatManager,
)
from semantic_kernel.agents.runtime import InProcessRuntime  # noqa: E402
from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion  # noqa: E402
from semantic_kernel.filters import FilterTypes, FunctionInvocationContext  # noqa: E402
from semantic_kernel.functions import kernel_function  # noqa: E402

SCENARIO = "semantic_kernel"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
SERVICE_NAME = "travel-assistant"
PACKAGES = ["semantic-kernel", "openai", "httpx", "pydantic"]

# SK logs every tool exception with a traceback (logger.exception): keep the console readable.
logging.getLogger("semantic_kernel").setLevel(logging.CRITICAL)


# ---------------------------------------------------------------------------------------------
# The scripted model: an OpenAI-compatible /chat/completions behind httpx.MockTransport.
# ---------------------------------------------------------------------------------------------

ToolCall = tuple[str, dict[str, Any]]


class Turn:
    """One scripted model response: text, tool calls, or an HTTP error."""

    def __init__(
        self,
        content: str | None = None,
        tool_calls: list[ToolCall] | None = None,
        error_status: int | None = None,
    ) -> None:
        self.content = content
        self.tool_calls = tool_calls or []
        self.error_status = error_status


def say(text: str) -> Turn:
    return Turn(content=text)


def call(*calls: ToolCall) -> Turn:
    return Turn(tool_calls=list(calls))


class ScriptedModel:
    """Per-model queues of turns; each HTTP request pops the next turn of the requested model.

    Usage is computed from the request and the response (a stand-in tokenizer: 1 token per 4
    characters) and reported the way OpenAI does (`usage.prompt_tokens/completion_tokens`, in the
    last SSE chunk when `stream_options.include_usage`). Every request served is counted in the
    run's ground truth: `current().llm(...)`, or `current().llm_error()` for an HTTP error.
    A tool call to a `Handoff-transfer_to_*` function is the model handing off: `handoff()`.
    """

    def __init__(self) -> None:
        self.queues: dict[str, list[Turn]] = {}
        self.counter = 0
        self.log: list[str] = []

    def script(self, model: str, *turns: Turn) -> None:
        self.queues.setdefault(model, []).extend(turns)

    def leftovers(self) -> dict[str, int]:
        return {m: len(q) for m, q in self.queues.items() if q}

    def reset(self) -> None:
        self.queues.clear()

    @staticmethod
    def _usage(body: dict[str, Any], turn: Turn) -> tuple[int, int]:
        prompt_chars = len(json.dumps(body.get("messages", [])))
        prompt_chars += len(json.dumps(body.get("tools", [])))
        completion_chars = len(turn.content or "")
        completion_chars += sum(len(n) + len(json.dumps(a)) for n, a in turn.tool_calls)
        return 12 + prompt_chars // 4, 3 + completion_chars // 4 + 6 * len(turn.tool_calls)

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        model = body["model"]
        queue = self.queues.get(model)
        if not queue:
            raise AssertionError(f"scripted model {model!r}: no turn left for this request")
        turn = queue.pop(0)
        self.counter += 1
        self.log.append(
            f"{model}: {len(body.get('messages', []))} msgs -> {turn.tool_calls or turn.content}"
        )

        if turn.error_status is not None:
            current().llm_error()
            kind = "rate_limit_exceeded" if turn.error_status == 429 else "server_error"
            return httpx.Response(
                turn.error_status,
                json={"error": {"message": f"scripted {kind}", "type": kind, "code": kind}},
            )

        input_tokens, output_tokens = self._usage(body, turn)
        current().llm(input_tokens=input_tokens, output_tokens=output_tokens)
        usage = {
            "prompt_tokens": input_tokens,
            "completion_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        }
        tool_calls = []
        for i, (name, args) in enumerate(turn.tool_calls):
            if name.startswith("Handoff-transfer_to_"):
                current().handoff()
            arguments = json.dumps(args)
            tool_calls.append(
                {
                    "id": f"call_{self.counter:03d}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
        finish = "tool_calls" if tool_calls else "stop"
        base = {
            "id": f"chatcmpl-scripted-{self.counter:03d}",
            "created": 1_760_000_000 + self.counter,
            "model": model,
            "system_fingerprint": "fp_scripted",
        }
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": turn.content}
            if tool_calls:
                message["tool_calls"] = tool_calls
            return httpx.Response(
                200,
                json={
                    **base,
                    "object": "chat.completion",
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                    ],
                    "usage": usage,
                },
            )

        # Server-sent events, shaped like OpenAI's: role, content deltas, tool-call deltas,
        # finish_reason, then (include_usage) a usage chunk with no choices.
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                **base,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        chunks = [chunk({"role": "assistant", "content": "" if turn.content else None})]
        text = turn.content or ""
        for start in range(0, len(text), 12):
            chunks.append(chunk({"content": text[start : start + 12]}))
        for i, tc in enumerate(tool_calls):
            head = {"index": i, "id": tc["id"], "type": "function"}
            head["function"] = {"name": tc["function"]["name"], "arguments": ""}
            chunks.append(chunk({"tool_calls": [head]}))
            args_delta = {"index": i, "function": {"arguments": tc["function"]["arguments"]}}
            chunks.append(chunk({"tool_calls": [args_delta]}))
        chunks.append(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append(
                {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            )
        sse = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return httpx.Response(
            200, content=sse.encode(), headers={"content-type": "text/event-stream"}
        )


MODEL = ScriptedModel()
CLIENT = AsyncOpenAI(
    api_key="sk-scripted",
    base_url="https://api.openai.com/v1",
    max_retries=0,  # an HTTP error reaches SK at once (no hidden retries to count)
    http_client=httpx.AsyncClient(transport=httpx.MockTransport(MODEL.handle)),
)


def chat_service(model: str) -> OpenAIChatCompletion:
    """The real SK OpenAI connector; `model` names the script queue."""
    return OpenAIChatCompletion(ai_model_id=model, async_client=CLIENT, service_id=model)


# ---------------------------------------------------------------------------------------------
# Plugins: kernel functions used as tools. Each body counts itself in the ground truth.
# ---------------------------------------------------------------------------------------------

WEATHER = {
    "Paris": 18,
    "Rome": 24,
    "Oslo": 7,
    "Lisbon": 21,
    "Berlin": 12,
    "Madrid": 26,
    "Vienna": 15,
}
RATES = {("EUR", "USD"): 1.10, ("USD", "EUR"): 0.91, ("EUR", "GBP"): 0.85, ("GBP", "EUR"): 1.18}


@contextmanager
def tool_body(name: str) -> Iterator[None]:
    """Ground truth: entered first thing in every tool function; counts the error if it raises."""
    current().tool(name)
    try:
        yield
    except Exception:
        current().tool_error()
        raise


class Weather:
    @kernel_function(name="get_weather", description="Current temperature in a city, in Celsius.")
    def get_weather(self, city: Annotated[str, "The city name"]) -> str:
        with tool_body("Weather-get_weather"):
            if city not in WEATHER:
                raise ValueError(f"unknown city {city!r}")
            return f"{WEATHER[city]}C in {city}"


class Currency:
    @kernel_function(name="convert", description="Convert an amount between currencies.")
    def convert(
        self,
        amount: Annotated[float, "The amount"],
        from_currency: Annotated[str, "ISO code, e.g. EUR"],
        to_currency: Annotated[str, "ISO code, e.g. USD"],
    ) -> str:
        with tool_body("Currency-convert"):
            rate = RATES[(from_currency, to_currency)]
            return f"{amount * rate:.2f} {to_currency}"


class Travel:
    def __init__(self) -> None:
        self.flaky_calls = 0

    @kernel_function(name="search_flights", description="Cheapest flight between two cities.")
    async def search_flights(
        self,
        origin: Annotated[str, "Departure city"],
        destination: Annotated[str, "Arrival city"],
    ) -> str:
        with tool_body("Travel-search_flights"):
            await asyncio.sleep(0.01)
            if destination == "Atlantis":
                raise LookupError("no airport serves Atlantis")
            if origin == "Oslo" and self.flaky_calls == 0:
                self.flaky_calls += 1
                raise TimeoutError("airline API timed out")
            return f"{origin}->{destination}: 120 EUR"

    @kernel_function(name="find_hotel", description="Cheapest hotel in a city.")
    async def find_hotel(self, city: Annotated[str, "City"]) -> str:
        with tool_body("Travel-find_hotel"):
            await asyncio.sleep(0.01)
            return f"Hotel Central, {city}: 90 EUR/night"

    @kernel_function(
        name="add_to_calendar", description="Add an event to the traveller's calendar."
    )
    def add_to_calendar(
        self, title: Annotated[str, "Event title"], date: Annotated[str, "ISO date"]
    ) -> str:
        with tool_body("Travel-add_to_calendar"):
            return f"added {title!r} on {date}"


class Billing:
    @kernel_function(name="lookup_invoice", description="Find an invoice by number.")
    def lookup_invoice(self, invoice_id: Annotated[str, "Invoice number"]) -> str:
        with tool_body("Billing-lookup_invoice"):
            return f"invoice {invoice_id}: 240 EUR, paid twice"

    @kernel_function(name="issue_refund", description="Refund an amount on an invoice.")
    def issue_refund(
        self, invoice_id: Annotated[str, "Invoice number"], amount: Annotated[float, "EUR"]
    ) -> str:
        with tool_body("Billing-issue_refund"):
            return f"refund R-{invoice_id} of {amount:.0f} EUR issued"


# ---------------------------------------------------------------------------------------------
# Agents
# ---------------------------------------------------------------------------------------------

TRAVEL_INSTRUCTIONS = "You are a travel assistant. Use the tools; answer in one short sentence."


def travel_agent(model: str = "scripted-travel", name: str = "TravelAgent") -> ChatCompletionAgent:
    """A ChatCompletionAgent with three plugins; FunctionChoiceBehavior.Auto() is its default."""
    return ChatCompletionAgent(
        service=chat_service(model),
        name=name,
        description="Plans trips: weather, currency, flights, hotels, calendar.",
        instructions=TRAVEL_INSTRUCTIONS,
        plugins=[Weather(), Currency(), Travel()],
    )


async def ask(agent: ChatCompletionAgent, question: str) -> str:
    response = await agent.get_response(messages=question)
    return str(response.content)


# ---------------------------------------------------------------------------------------------
# Scenarios: each scripts the model, drives SK the way a user would, returns the final answer.
# ---------------------------------------------------------------------------------------------


async def hello_capabilities() -> str:
    MODEL.script(
        "scripted-travel", say("I can check weather, convert currency, find flights and hotels.")
    )
    return await ask(travel_agent(), "Hi! What can you do?")


async def weather_paris() -> str:
    MODEL.script(
        "scripted-travel",
        call(("Weather-get_weather", {"city": "Paris"})),
        say("It is 18C in Paris."),
    )
    return await ask(travel_agent(), "How warm is it in Paris?")


async def weather_compare_parallel() -> str:
    MODEL.script(
        "scripted-travel",
        call(("Weather-get_weather", {"city": "Rome"}), ("Weather-get_weather", {"city": "Oslo"})),
        say("Rome is warmer: 24C against 7C in Oslo."),
    )
    return await ask(travel_agent(), "Which is warmer now, Rome or Oslo?")


async def convert_chain() -> str:
    MODEL.script(
        "scripted-travel",
        call(("Currency-convert", {"amount": 100, "from_currency": "EUR", "to_currency": "USD"})),
        call(("Currency-convert", {"amount": 110, "from_currency": "USD", "to_currency": "EUR"})),
        call(("Currency-convert", {"amount": 100, "from_currency": "EUR", "to_currency": "GBP"})),
        say("100 EUR is 110.00 USD (100.10 EUR back) or 85.00 GBP."),
    )
    return await ask(travel_agent(), "Convert 100 EUR to USD, back again, and to GBP.")


async def trip_plan() -> str:
    MODEL.script(
        "scripted-travel",
        call(
            ("Weather-get_weather", {"city": "Lisbon"}),
            ("Travel-search_flights", {"origin": "Paris", "destination": "Lisbon"}),
            ("Travel-find_hotel", {"city": "Lisbon"}),
        ),
        call(("Travel-add_to_calendar", {"title": "Lisbon trip", "date": "2025-06-01"})),
        say("Booked in your calendar: Lisbon (21C), flight 120 EUR, Hotel Central 90 EUR/night."),
    )
    return await ask(travel_agent(), "Plan a weekend in Lisbon from Paris on 2025-06-01.")


async def budget_wrong() -> str:
    MODEL.script(
        "scripted-travel",
        call(
            ("Travel-search_flights", {"origin": "Paris", "destination": "Rome"}),
            ("Travel-find_hotel", {"city": "Rome"}),
        ),
        call(
            ("Currency-convert", {"amount": 120, "from_currency": "EUR", "to_currency": "USD"}),
            ("Currency-convert", {"amount": 90, "from_currency": "EUR", "to_currency": "USD"}),
            ("Currency-convert", {"amount": 210, "from_currency": "EUR", "to_currency": "GBP"}),
        ),
        # The model adds up wrongly: flight 120 + one night 90 = 210 EUR.
        say("Total: 150 EUR."),
    )
    return await ask(travel_agent(), "Flight Paris-Rome plus one hotel night: total in EUR?")


async def itinerary_six() -> str:
    MODEL.script(
        "scripted-travel",
        call(
            ("Weather-get_weather", {"city": "Berlin"}),
            ("Weather-get_weather", {"city": "Vienna"}),
            ("Travel-find_hotel", {"city": "Berlin"}),
            ("Travel-find_hotel", {"city": "Vienna"}),
        ),
        call(
            ("Travel-search_flights", {"origin": "Berlin", "destination": "Vienna"}),
            ("Travel-add_to_calendar", {"title": "Berlin-Vienna", "date": "2025-07-10"}),
        ),
        say("Berlin 12C then Vienna 15C; flight 120 EUR on 2025-07-10, hotels 90 EUR/night."),
    )
    return await ask(travel_agent(), "Itinerary Berlin then Vienna on 2025-07-10.")


async def warmest_of_seven() -> str:
    MODEL.script(
        "scripted-travel",
        call(*[("Weather-get_weather", {"city": c}) for c in ("Paris", "Rome", "Oslo", "Lisbon")]),
        call(*[("Weather-get_weather", {"city": c}) for c in ("Berlin", "Madrid", "Vienna")]),
        say("Madrid is the warmest at 26C."),
    )
    return await ask(
        travel_agent(), "Which of Paris, Rome, Oslo, Lisbon, Berlin, Madrid, Vienna is warmest?"
    )


async def flight_retry_after_error() -> str:
    MODEL.script(
        "scripted-travel",
        call(("Travel-search_flights", {"origin": "Oslo", "destination": "Rome"})),
        # SK returns the exception text as the tool result; the model retries.
        call(("Travel-search_flights", {"origin": "Oslo", "destination": "Rome"})),
        say("Oslo to Rome: 120 EUR."),
    )
    return await ask(travel_agent(), "Cheapest flight Oslo to Rome?")


async def unknown_tool_then_recover() -> str:
    MODEL.script(
        "scripted-travel",
        # Not a tool the kernel has: SK answers "not part of the provided tools" without running
        # anything (no tool body, no execute_tool span); the model then picks the right one.
        call(("Weather-get_forecast", {"city": "Vienna"})),
        call(("Weather-get_weather", {"city": "Vienna"})),
        say("Vienna: 15C."),
    )
    return await ask(travel_agent(), "Weather in Vienna?")


async def capital_wrong() -> str:
    MODEL.script("scripted-travel", say("The capital of Australia is Sydney."))
    return await ask(travel_agent(), "What is the capital of Australia?")


async def tool_error_unrecovered_then_llm_500() -> str:
    MODEL.script(
        "scripted-travel",
        call(
            ("Weather-get_weather", {"city": "Madrid"}),
            ("Travel-search_flights", {"origin": "Madrid", "destination": "Atlantis"}),
        ),
        Turn(error_status=500),
    )
    return await ask(travel_agent(), "Weather in Madrid and a flight to Atlantis?")


async def rate_limited() -> str:
    MODEL.script("scripted-travel", Turn(error_status=429))
    return await ask(travel_agent(), "Hotel in Oslo?")


async def streaming_parallel() -> str:
    MODEL.script(
        "scripted-travel",
        call(
            ("Weather-get_weather", {"city": "Paris"}), ("Weather-get_weather", {"city": "Vienna"})
        ),
        say("Paris 18C, Vienna 15C."),
    )
    agent = travel_agent()
    parts = [
        str(chunk.content)
        async for chunk in agent.invoke_stream(messages="Paris and Vienna weather?")
    ]
    return "".join(parts)


def triage_agent(model: str = "scripted-triage") -> ChatCompletionAgent:
    return ChatCompletionAgent(
        service=chat_service(model),
        name="Triage",
        description="Routes the customer to the right specialist.",
        instructions="Route the request to the right agent.",
    )


async def run_orchestration(orchestration: Any, task: str) -> Any:
    runtime = InProcessRuntime()
    runtime.start()
    try:
        result = await orchestration.invoke(task=task, runtime=runtime)
        return await result.get(timeout=30)
    finally:
        await runtime.stop_when_idle()


async def handoff_weather() -> str:
    triage, travel = triage_agent(), travel_agent()
    handoffs = OrchestrationHandoffs().add(triage, travel).add(travel, triage)
    MODEL.script("scripted-triage", call(("Handoff-transfer_to_TravelAgent", {})))
    MODEL.script(
        "scripted-travel",
        call(("Weather-get_weather", {"city": "Oslo"})),
        # The orchestration's built-in tool that ends the task.
        call(("Handoff-complete_task", {"task_summary": "Oslo is 7C today."})),
    )
    result = await run_orchestration(
        HandoffOrchestration(members=[triage, travel], handoffs=handoffs), "Is it cold in Oslo?"
    )
    return str(result.content)


async def handoff_refund_chain() -> str:
    triage = triage_agent()
    billing = ChatCompletionAgent(
        service=chat_service("scripted-billing"),
        name="BillingAgent",
        description="Looks up invoices and payments.",
        instructions="Find the invoice; hand refunds to the refund agent.",
        plugins=[Billing()],
    )
    refunds = ChatCompletionAgent(
        service=chat_service("scripted-refunds"),
        name="RefundAgent",
        description="Issues refunds.",
        instructions="Issue refunds for duplicate payments.",
        plugins=[Billing()],
    )
    handoffs = (
        OrchestrationHandoffs()
        .add_many(triage, [billing, refunds])
        .add(billing, refunds)
        .add(billing, triage)
        .add(refunds, triage)
    )
    MODEL.script("scripted-triage", call(("Handoff-transfer_to_BillingAgent", {})))
    MODEL.script(
        "scripted-billing",
        call(("Billing-lookup_invoice", {"invoice_id": "INV-7"})),
        call(("Handoff-transfer_to_RefundAgent", {})),
    )
    MODEL.script(
        "scripted-refunds",
        call(("Billing-issue_refund", {"invoice_id": "INV-7", "amount": 120})),
        # A plain answer: with no human_response_function the actor completes the task itself.
        say("Refund R-INV-7 of 120 EUR issued for the duplicate payment."),
    )
    answers: list[str] = []

    def on_response(message: Any) -> None:
        answers.append(str(message.content))

    await run_orchestration(
        HandoffOrchestration(
            members=[triage, billing, refunds],
            handoffs=handoffs,
            agent_response_callback=on_response,
        ),
        "I was charged twice for invoice INV-7.",
    )
    return answers[-1] if answers else ""


async def agent_as_tool() -> str:
    weather_desk = ChatCompletionAgent(
        service=chat_service("scripted-weatherdesk"),
        name="WeatherDesk",
        description="Answers weather questions.",
        instructions="Answer weather questions with the weather tool.",
        plugins=[Weather()],
    )
    concierge = ChatCompletionAgent(
        service=chat_service("scripted-concierge"),
        name="Concierge",
        instructions="Delegate weather to WeatherDesk; convert money yourself.",
        plugins=[weather_desk, Currency()],  # an Agent given as a plugin becomes a kernel function
    )

    async def count_agent_tool(
        context: FunctionInvocationContext, next: Callable[..., Any]
    ) -> None:
        # The agent-as-tool body is SK's own code: count its entry at the function filter.
        if context.function.plugin_name == weather_desk.name:
            current().tool(context.function.fully_qualified_name)
            try:
                await next(context)
            except Exception:
                current().tool_error()
                raise
        else:
            await next(context)

    concierge.kernel.add_filter(FilterTypes.FUNCTION_INVOCATION, count_agent_tool)
    MODEL.script(
        "scripted-concierge",
        call(
            ("WeatherDesk-WeatherDesk", {"messages": "Temperature in Rome now?"}),
            ("Currency-convert", {"amount": 100, "from_currency": "EUR", "to_currency": "USD"}),
        ),
        say("Rome is 24C, and 100 EUR is 110.00 USD."),
    )
    MODEL.script(
        "scripted-weatherdesk",
        call(("Weather-get_weather", {"city": "Rome"})),
        say("24C in Rome."),
    )
    return await ask(concierge, "Weather in Rome, and 100 EUR in USD?")


async def group_chat_review() -> str:
    writer = ChatCompletionAgent(
        service=chat_service("scripted-writer"),
        name="Writer",
        description="Writes travel tips.",
        instructions="Write one travel tip, using the weather tool.",
        plugins=[Weather()],
    )
    reviewer = ChatCompletionAgent(
        service=chat_service("scripted-reviewer"),
        name="Reviewer",
        description="Reviews travel tips.",
        instructions="Suggest one improvement.",
    )
    MODEL.script(
        "scripted-writer",
        call(("Weather-get_weather", {"city": "Lisbon"})),
        say("Lisbon is 21C: pack light."),
        say("Lisbon is 21C and sunny: pack light and bring sunscreen."),
    )
    MODEL.script("scripted-reviewer", say("Mention sunscreen."))
    result = await run_orchestration(
        GroupChatOrchestration(
            members=[writer, reviewer], manager=RoundRobinGroupChatManager(max_rounds=3)
        ),
        "A travel tip for Lisbon.",
    )
    return str(result.content)


class Scenario:
    def __init__(
        self,
        task_id: str,
        fn: Callable[[], Any],
        expected: str,
        notes: str,
        contains: bool = False,
    ) -> None:
        self.task_id, self.fn, self.expected, self.notes, self.contains = (
            task_id,
            fn,
            expected,
            notes,
            contains,
        )

    def check(self, output: str) -> bool:
        return self.expected in output if self.contains else output == self.expected


SCENARIOS = [
    Scenario(
        "hello-capabilities",
        hello_capabilities,
        "I can check weather, convert currency, find flights and hotels.",
        "0 tools; get_response",
    ),
    Scenario("weather-paris", weather_paris, "It is 18C in Paris.", "1 tool"),
    Scenario(
        "weather-compare-parallel",
        weather_compare_parallel,
        "Rome is warmer: 24C against 7C in Oslo.",
        "2 tool calls in one model response (parallel)",
    ),
    Scenario(
        "convert-chain",
        convert_chain,
        "100 EUR is 110.00 USD (100.10 EUR back) or 85.00 GBP.",
        "3 sequential tool calls over 3 model turns",
    ),
    Scenario(
        "trip-plan",
        trip_plan,
        "Booked in your calendar: Lisbon (21C), flight 120 EUR, Hotel Central 90 EUR/night.",
        "4 tools: 3 parallel then 1",
    ),
    Scenario(
        "budget-wrong", budget_wrong, "Total: 210 EUR.", "5 tools (2 + 3 parallel); wrong final sum"
    ),
    Scenario(
        "itinerary-six",
        itinerary_six,
        "Berlin 12C then Vienna 15C; flight 120 EUR on 2025-07-10, hotels 90 EUR/night.",
        "6 tools: 4 parallel then 2 parallel",
    ),
    Scenario(
        "warmest-of-seven",
        warmest_of_seven,
        "Madrid is the warmest at 26C.",
        "7 tools: 4 + 3 parallel",
    ),
    Scenario(
        "flight-retry-after-error",
        flight_retry_after_error,
        "Oslo to Rome: 120 EUR.",
        "tool raises TimeoutError (SK feeds the error to the model), model retries: recovered",
    ),
    Scenario(
        "unknown-tool-then-recover",
        unknown_tool_then_recover,
        "Vienna: 15C.",
        "model first calls a tool the kernel does not have (never runs, no span), "
        "then the right one",
    ),
    Scenario("capital-wrong", capital_wrong, "Canberra", "0 tools; wrong answer", contains=True),
    Scenario(
        "tool-error-then-llm-500",
        tool_error_unrecovered_then_llm_500,
        "Madrid",
        "2 parallel tools, one raises; the next model call gets HTTP 500: "
        "exception escapes the agent",
        contains=True,
    ),
    Scenario(
        "rate-limited",
        rate_limited,
        "Oslo",
        "first model call HTTP 429: exception escapes",
        contains=True,
    ),
    Scenario(
        "streaming-parallel",
        streaming_parallel,
        "Paris 18C, Vienna 15C.",
        "invoke_stream (SSE, usage in the last chunk); 2 parallel tools",
    ),
    Scenario(
        "handoff-weather",
        handoff_weather,
        "Oslo is 7C today.",
        "HandoffOrchestration Triage -> TravelAgent (1 handoff via the built-in "
        "Handoff-transfer_to_TravelAgent tool, not counted as a step); 1 tool; "
        "ends with the built-in Handoff-complete_task tool (not a step)",
        contains=True,
    ),
    Scenario(
        "handoff-refund-chain",
        handoff_refund_chain,
        "Refund R-INV-7 of 120 EUR issued for the duplicate payment.",
        "HandoffOrchestration Triage -> BillingAgent -> RefundAgent (2 handoffs via "
        "Handoff-transfer_to_* tools, not steps); 2 tools; ends with a plain answer "
        "(the actor completes the task itself, no complete_task span)",
    ),
    Scenario(
        "agent-as-tool",
        agent_as_tool,
        "Rome is 24C, and 100 EUR is 110.00 USD.",
        "Concierge with plugins=[WeatherDesk agent, Currency]: agent-as-tool (counted as "
        "1 tool, WeatherDesk-WeatherDesk) in parallel with convert; the sub-agent runs "
        "its own get_weather: 3 tools",
    ),
    Scenario(
        "group-chat-review",
        group_chat_review,
        "sunscreen",
        "GroupChatOrchestration, RoundRobinGroupChatManager(max_rounds=3): Writer (1 tool), "
        "Reviewer, Writer; manager-chosen turns, no handoffs counted",
        contains=True,
    ),
]


# What SK emits (goes to spans_summary.md "Notes"): paragraphs, blank-line separated.
_NOTES_TEXT = """
One service.name for all runs: SK takes its tracers from the global tracer provider.

LLM call: `chat <model>` span, kind INTERNAL (not CLIENT), `gen_ai.operation.name=chat`,
`gen_ai.system=openai` (no `gen_ai.provider.name`, no `gen_ai.response.model`),
`gen_ai.usage.input_tokens/output_tokens` (each omitted when 0),
`gen_ai.response.finish_reason` (singular; Python enum text, e.g. `FinishReason.TOOL_CALLS`),
`server.address` = the full base URL. A failed call: status ERROR,
`error.type` = `<class '...ServiceResponseException'>`, no usage.

Chat messages (sensitive mode) go to Python log records (`event.name` gen_ai.*.message /
gen_ai.choice), not to the chat span; `invoke_agent` spans carry `gen_ai.input.messages` /
`gen_ai.output.messages` (SK's own message JSON) and `gen_ai.tool.definitions`; tool spans
carry `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`.

Tool: `execute_tool <Plugin>-<function>`, kind INTERNAL, `gen_ai.operation.name=execute_tool`,
`gen_ai.tool.name` = `Plugin-function`, `gen_ai.tool.call.id` = the model's call id. A raising
tool: status ERROR, `error.type` = class name, TWO `exception` events. A tool call the kernel
rejects (unknown name, bad arguments) emits no span at all.

`AutoFunctionInvocationLoop` (INTERNAL, only `sk.available_functions`) wraps each agent's
model/tool loop; parallel tool calls are sibling `execute_tool` spans under it.

HandoffOrchestration adds a `Handoff` plugin to each member: `Handoff-transfer_to_<Agent>`
(the handoff) and `Handoff-complete_task` (ends the task); both are plain `execute_tool` spans,
identical in shape to user tools. Ground truth counts neither as a tool call (handoffs are
counted in `handoffs`, where the scripted model calls transfer_to_*).

Agent as plugin (`plugins=[agent]`): `execute_tool <Agent>-<Agent>` whose child is
`invoke_agent <Agent>`; ground truth counts it as 1 tool call (plus the sub-agent's own tools).

Orchestrations add SK agent-runtime messaging spans (scope `agent_runtime InProcessRuntime`,
PRODUCER/CONSUMER, `messaging.operation`, span links, names with per-invocation GUIDs). They
are parented in the context where `runtime.start()` ran: here inside `badge.run`. Started
outside the root, every agent/LLM/tool span of the orchestration lands in other traces, joined
to the run only by span links (checked offline, not recorded).
"""
NOTES = [" ".join(p.split()) for p in _NOTES_TEXT.strip().split("\n\n")]


async def main() -> None:
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "Semantic Kernel (Python) ChatCompletionAgent + plugins with auto function calling, "
            "HandoffOrchestration, GroupChatOrchestration and agent-as-plugin, real "
            "OpenAIChatCompletion connector over a scripted httpx MockTransport; "
            "SK's native GenAI OTel diagnostics "
            "(SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS[_SENSITIVE]=true), "
            "OTLP/HTTP protobuf, BatchSpanProcessor(max_export_batch_size=6)"
        ),
    )
    with rec:
        provider = rec.tracer_provider(service_name=SERVICE_NAME, transport="http", batch_size=6)
        # SK's tracers come from the global provider (module-level get_tracer).
        trace.set_tracer_provider(provider)
        for scenario in SCENARIOS:
            MODEL.reset()
            with rec.run(
                provider, task_id=scenario.task_id, expected_output=scenario.expected
            ) as run:
                run.notes = scenario.notes
                output = await scenario.fn()
                run.output = output
                run.success = scenario.check(output)
            if MODEL.leftovers():
                print(
                    f"WARNING {scenario.task_id}: unused scripted turns {MODEL.leftovers()}",
                    file=sys.stderr,
                )
        rec.flush()
    rec.finish(
        packages=PACKAGES,
        notes=NOTES,
    )
    for line in MODEL.log:
        print("model:", line, file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())

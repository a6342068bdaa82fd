"""Record llama-index agents traced by OpenInference (openinference-instrumentation-llama-index).

llama-index-core's workflow agents (FunctionAgent, AgentWorkflow with handoffs, ReActAgent), the
real LlamaIndexInstrumentor, the real OTel SDK and OTLP/HTTP protobuf exporter (batch 6), sent to
the kit's capture server. The model is scripted: `ScriptedLLM` subclasses llama-index's
`FunctionCallingLLM` (the extension point every provider integration uses) and answers like an
OpenAI-compatible provider: tool calls as `ToolCallBlock`s, streaming chunks, and the usage in the
raw response (`raw["usage"]`, OpenAI's keys) on the last chunk, where the instrumentation reads it.

Ground truth is counted in code: tool bodies (`current().tool`), model calls with the usage the
model reports (`current().llm`), handoffs observed on the workflow's event stream (the active
agent changing), never from spans.

Run: /work/envs/llamaindex_openinference/bin/python recordings/llamaindex_openinference/record.py
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections import deque
from collections.abc import AsyncGenerator, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Recording, current  # noqa: E402
from llama_index.core.agent.workflow import (  # noqa: E402
    AgentInput,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
)
from llama_index.core.base.llms.types import (  # noqa: E402
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.llms.callbacks import (  # noqa: E402
    llm_chat_callback,
    llm_completion_callback,
)
from llama_index.core.llms.function_calling import FunctionCallingLLM  # noqa: E402
from llama_index.core.llms.llm import ToolSelection  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor  # noqa: E402

SCENARIO = "llamaindex_openinference"
OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "recordings" / SCENARIO
MODEL = "scripted-gpt-4o-mini"

# --------------------------------------------------------------------------------------------
# The scripted model
# --------------------------------------------------------------------------------------------


class ProviderError(RuntimeError):
    """What a provider SDK raises on an HTTP 5xx (e.g. openai.InternalServerError)."""


@dataclass
class Turn:
    """One scripted model response: text and/or tool calls (parallel if several), or an error."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None


def say(text: str) -> Turn:
    return Turn(text=text)


def call(*calls: tuple[str, dict[str, Any]], text: str = "") -> Turn:
    return Turn(text=text, calls=list(calls))


def fail(message: str) -> Turn:
    return Turn(error=message)


SCRIPT: deque[Turn] = deque()
_call_ids = itertools.count(1)


def _message_tokens(message: ChatMessage) -> int:
    size = 4
    for block in message.blocks:
        if isinstance(block, TextBlock):
            size += len(block.text) // 4
        elif isinstance(block, ToolCallBlock):
            size += 8 + len(str(block.tool_kwargs)) // 4
    return size


class ScriptedLLM(FunctionCallingLLM):
    """An OpenAI-compatible chat model whose answers come from SCRIPT, one Turn per call."""

    model: str = MODEL
    temperature: float = 0.0

    @classmethod
    def class_name(cls) -> str:
        return "ScriptedLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=128000,
            num_output=4096,
            is_chat_model=True,
            is_function_calling_model=True,
            model_name=self.model,
        )

    # -- the provider side --------------------------------------------------------------------

    def _respond(
        self, messages: Sequence[ChatMessage], kwargs: dict[str, Any]
    ) -> tuple[ChatMessage, dict[str, int]]:
        """Take the next scripted turn; returns the assistant message and the usage."""
        if not SCRIPT:
            raise AssertionError("model called more often than scripted")
        turn = SCRIPT.popleft()
        tools = kwargs.get("tools") or []
        prompt_tokens = 20 + sum(_message_tokens(m) for m in messages) + 30 * len(tools)
        if turn.error is not None:
            # The request was sent and failed: a model call that reports no usage.
            current().llm_error()
            raise ProviderError(turn.error)
        blocks: list[Any] = []
        if turn.text:
            blocks.append(TextBlock(text=turn.text))
        for name, args in turn.calls:
            blocks.append(
                ToolCallBlock(
                    tool_call_id=f"call_{next(_call_ids):04d}", tool_name=name, tool_kwargs=args
                )
            )
        message = ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)
        completion_tokens = (
            2 + len(turn.text) // 4 + sum(12 + len(str(args)) // 4 for _, args in turn.calls)
        )
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        current().llm(input_tokens=prompt_tokens, output_tokens=completion_tokens)
        return message, usage

    def _completion(self, message: ChatMessage, usage: dict[str, int]) -> dict[str, Any]:
        finish = (
            "tool_calls" if any(isinstance(b, ToolCallBlock) for b in message.blocks) else "stop"
        )
        return {
            "id": f"chatcmpl-{next(_call_ids):06d}",
            "object": "chat.completion",
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": message.content},
                    "finish_reason": finish,
                }
            ],
            "usage": usage,
        }

    def _chunks(self, message: ChatMessage, usage: dict[str, int]) -> list[ChatResponse]:
        """Streaming as OpenAI does with stream_options.include_usage: text deltas, the tool
        calls, then a last chunk with no choices that carries the usage."""
        chunk_id = f"chatcmpl-{next(_call_ids):06d}"
        text = message.content or ""
        calls = [b for b in message.blocks if isinstance(b, ToolCallBlock)]
        pieces = [text[: len(text) // 2], text[len(text) // 2 :]] if text else []
        out: list[ChatResponse] = []
        sofar = ""
        for piece in pieces:
            sofar += piece
            out.append(
                ChatResponse(
                    message=ChatMessage(role=MessageRole.ASSISTANT, content=sofar),
                    delta=piece,
                    raw={
                        "id": chunk_id,
                        "object": "chat.completion.chunk",
                        "model": self.model,
                        "choices": [{"index": 0, "delta": {"content": piece}}],
                        "usage": None,
                    },
                )
            )
        blocks: list[Any] = ([TextBlock(text=text)] if text else []) + calls
        final = ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)
        out.append(
            ChatResponse(
                message=final,
                delta="",
                raw={
                    "id": chunk_id,
                    "object": "chat.completion.chunk",
                    "model": self.model,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {},
                            "finish_reason": "tool_calls" if calls else "stop",
                        }
                    ],
                    "usage": None,
                },
            )
        )
        out.append(
            ChatResponse(
                message=final,
                delta="",
                raw={
                    "id": chunk_id,
                    "object": "chat.completion.chunk",
                    "model": self.model,
                    "choices": [],
                    "usage": usage,
                },
            )
        )
        return out

    # -- the LLM interface (decorated like every llama-index provider integration) -------------

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        message, usage = self._respond(messages, kwargs)
        return ChatResponse(message=message, raw=self._completion(message, usage))

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        await asyncio.sleep(0.002)
        message, usage = self._respond(messages, kwargs)
        return ChatResponse(message=message, raw=self._completion(message, usage))

    @llm_chat_callback()
    def stream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> Generator[ChatResponse, None, None]:
        message, usage = self._respond(messages, kwargs)
        chunks = self._chunks(message, usage)

        def gen() -> Generator[ChatResponse, None, None]:
            yield from chunks

        return gen()

    @llm_chat_callback()
    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> AsyncGenerator[ChatResponse, None]:
        await asyncio.sleep(0.002)
        message, usage = self._respond(messages, kwargs)
        chunks = self._chunks(message, usage)

        async def gen() -> AsyncGenerator[ChatResponse, None]:
            for chunk in chunks:
                await asyncio.sleep(0.001)
                yield chunk

        return gen()

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError("chat model")

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("chat model")

    @llm_completion_callback()
    async def acomplete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponse:
        raise NotImplementedError("chat model")

    @llm_completion_callback()
    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("chat model")

    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """As llama-index-llms-openai does: OpenAI tool specs plus the message list."""
        messages = list(chat_history or [])
        if isinstance(user_msg, str):
            messages.append(ChatMessage(role=MessageRole.USER, content=user_msg))
        elif user_msg is not None:
            messages.append(user_msg)
        return {
            "messages": messages,
            "tools": [tool.metadata.to_openai_tool() for tool in tools] or None,
            "tool_choice": "required" if tool_required else "auto",
            "parallel_tool_calls": allow_parallel_tool_calls,
            **kwargs,
        }

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        calls = [b for b in response.message.blocks if isinstance(b, ToolCallBlock)]
        if not calls and error_on_no_tool_call:
            raise ValueError("Expected at least one tool call")
        return [
            ToolSelection(
                tool_id=b.tool_call_id or "",
                tool_name=b.tool_name,
                tool_kwargs=b.tool_kwargs if isinstance(b.tool_kwargs, dict) else {},
            )
            for b in calls
        ]


# --------------------------------------------------------------------------------------------
# Tools (ground truth: current().tool at entry, tool_error when raising)
# --------------------------------------------------------------------------------------------

PRICES = {"apple": 1.25, "bread": 3.5, "cheese": 4.75, "milk": 0.99}
RATES = {"EUR": 0.92, "GBP": 0.79}
DOCS = {
    "refund": "Refunds are accepted within 30 days of purchase.",
    "shipping": "Standard shipping takes 3-5 business days.",
}
WEATHER = {"Paris": "18C and sunny", "Rome": "24C and clear"}
HOTELS = {"Rome": "Hotel Roma", "Paris": "Hotel Lutece"}


def add(a: float, b: float) -> float:
    """Add two numbers."""
    current().tool("add")
    return round(a + b, 2)


def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    current().tool("multiply")
    return round(a * b, 2)


def lookup_price(item: str) -> float:
    """Look up the unit price of a grocery item in USD."""
    current().tool("lookup_price")
    return PRICES[item]


def convert_currency(amount: float, currency: str) -> float:
    """Convert an amount in USD to another currency."""
    current().tool("convert_currency")
    if currency not in RATES:
        current().tool_error()
        raise ValueError(f"unsupported currency: {currency}")
    return round(amount * RATES[currency], 2)


def search_docs(query: str) -> str:
    """Search the store's policy documents."""
    current().tool("search_docs")
    for key, text in DOCS.items():
        if key in query.lower():
            return text
    return "No matching document."


def submit_report(summary: str) -> str:
    """Submit the final report to the user; its text is the answer."""
    current().tool("submit_report")
    return f"REPORT: {summary}"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    current().tool("get_weather")
    return WEATHER.get(city, "unknown")


def find_hotel(city: str) -> str:
    """Find an available hotel in a city."""
    current().tool("find_hotel")
    return HOTELS.get(city, "none")


def book_hotel(hotel: str, nights: int) -> str:
    """Book a hotel for a number of nights."""
    current().tool("book_hotel")
    return f"Booked {hotel} for {nights} nights (ref BK-{nights}{len(hotel)})"


CALC_TOOLS = [
    FunctionTool.from_defaults(fn=f)
    for f in (add, multiply, lookup_price, convert_currency, search_docs)
] + [FunctionTool.from_defaults(fn=submit_report, return_direct=True)]
REACT_TOOLS = [FunctionTool.from_defaults(fn=f) for f in (add, multiply, convert_currency)]


def calc_agent(streaming: bool = True) -> FunctionAgent:
    return FunctionAgent(
        name="calc-agent",
        description="Calculator and shopping assistant.",
        tools=CALC_TOOLS,
        llm=ScriptedLLM(),
        system_prompt="You are a calculator and shopping assistant. Use the tools.",
        streaming=streaming,
    )


def travel_desk() -> AgentWorkflow:
    triage = FunctionAgent(
        name="triage-agent",
        description="Routes travel requests to the right specialist.",
        system_prompt="Route the request: weather questions to weather-agent, hotels to "
        "booking-agent.",
        llm=ScriptedLLM(),
        tools=[],
        can_handoff_to=["weather-agent", "booking-agent"],
    )
    weather = FunctionAgent(
        name="weather-agent",
        description="Answers weather questions.",
        system_prompt="You report the weather.",
        llm=ScriptedLLM(),
        tools=[get_weather],
        can_handoff_to=["booking-agent"],
    )
    booking = FunctionAgent(
        name="booking-agent",
        description="Finds and books hotels.",
        system_prompt="You book hotels.",
        llm=ScriptedLLM(),
        tools=[find_hotel, book_hotel],
        can_handoff_to=["weather-agent"],
    )
    return AgentWorkflow(agents=[triage, weather, booking], root_agent="triage-agent")


def react_agent() -> ReActAgent:
    return ReActAgent(
        name="react-agent",
        description="ReAct calculator.",
        tools=REACT_TOOLS,
        llm=ScriptedLLM(),
        system_prompt="Think step by step.",
    )


async def drive(workflow: Any, user_msg: str, **kwargs: Any) -> str:
    """Run an agent/workflow as the docs show (handler, stream_events, await), counting handoffs:
    the active agent changing between AgentInput events."""
    handler = workflow.run(user_msg=user_msg, **kwargs)
    active: str | None = None
    async for event in handler.stream_events():
        if isinstance(event, AgentInput):
            if active is not None and event.current_agent_name != active:
                current().handoff()
            active = event.current_agent_name
    result = await handler
    return str(result).strip()


# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


@dataclass
class Task:
    task_id: str
    service: str  # which provider / agent
    make: Any  # () -> agent or workflow
    prompt: str
    expected: str
    turns: list[Turn]
    notes: str
    run_kwargs: dict[str, Any] = field(default_factory=dict)


def react(thought: str, action: str, args: str) -> Turn:
    return say(f"Thought: {thought}\nAction: {action}\nAction Input: {args}")


def answer(thought: str, text: str) -> Turn:
    return say(f"Thought: {thought}\nAnswer: {text}")


def handoff(to: str, reason: str) -> tuple[str, dict[str, Any]]:
    return ("handoff", {"to_agent": to, "reason": reason})


TASKS = [
    Task(
        "greet",
        "calc-agent",
        calc_agent,
        "Hello!",
        "Hello! How can I help?",
        [say("Hello! How can I help?")],
        "FunctionAgent, 0 tool calls, 1 model call",
    ),
    Task(
        "arith-sum",
        "calc-agent",
        calc_agent,
        "What is 4 + 6?",
        "10",
        [call(("add", {"a": 4, "b": 6})), say("10")],
        "FunctionAgent, 1 tool call",
    ),
    Task(
        "arith-parallel",
        "calc-agent",
        calc_agent,
        "2+3 and 4*5?",
        "5 and 20",
        [call(("add", {"a": 2, "b": 3}), ("multiply", {"a": 4, "b": 5})), say("5 and 20")],
        "FunctionAgent, 2 parallel tool calls in one model response",
    ),
    Task(
        "price-total",
        "calc-agent",
        calc_agent,
        "Price of an apple plus a loaf of bread?",
        "4.75",
        [
            call(("lookup_price", {"item": "apple"}), ("lookup_price", {"item": "bread"})),
            call(("add", {"a": 1.25, "b": 3.5})),
            say("4.75"),
        ],
        "FunctionAgent, 3 tool calls (2 parallel, then 1)",
    ),
    Task(
        "convert-recover",
        "calc-agent",
        calc_agent,
        "Convert 10 USD to euros.",
        "9.2",
        [
            call(("convert_currency", {"amount": 10, "currency": "XYZ"})),
            call(("convert_currency", {"amount": 10, "currency": "EUR"})),
            say("9.2"),
        ],
        "FunctionAgent, a tool raises (ValueError), the agent recovers: 2 tool calls, 1 error",
    ),
    Task(
        "multiply-wrong",
        "calc-agent",
        calc_agent,
        "What is 6 * 7?",
        "42",
        [call(("multiply", {"a": 6, "b": 7})), say("48")],
        "FunctionAgent, 1 tool call, wrong final answer",
    ),
    Task(
        "seven-tools",
        "calc-agent",
        calc_agent,
        "Total price of apple, bread, cheese, milk?",
        "10.49",
        [
            call(*[("lookup_price", {"item": i}) for i in ("apple", "bread", "cheese", "milk")]),
            call(("add", {"a": 1.25, "b": 3.5}), ("add", {"a": 4.75, "b": 0.99})),
            call(("add", {"a": 4.75, "b": 5.74})),
            say("10.49"),
        ],
        "FunctionAgent, 7 tool calls (4 parallel, 2 parallel, 1)",
    ),
    Task(
        "report-direct",
        "calc-agent",
        calc_agent,
        "Summarise the refund policy.",
        "REPORT: Refunds within 30 days.",
        [
            call(("search_docs", {"query": "refund policy"})),
            call(("submit_report", {"summary": "Refunds within 30 days."})),
        ],
        "FunctionAgent, a return_direct tool ends the run (its output is the answer, no final "
        "model call): 2 tool calls, 2 model calls",
    ),
    Task(
        "model-error",
        "calc-agent",
        calc_agent,
        "Price of cheese in euros?",
        "4.37",
        [call(("lookup_price", {"item": "cheese"})), fail("Error code: 503 - overloaded")],
        "FunctionAgent, the model fails on its 2nd call (provider 503): exception escapes",
    ),
    Task(
        "max-iterations",
        "calc-agent",
        calc_agent,
        "Find the warranty policy.",
        "2 years",
        [
            call(("search_docs", {"query": "warranty"})),
            call(("search_docs", {"query": "warranty policy"})),
            call(("search_docs", {"query": "guarantee"})),
        ],
        "FunctionAgent run(max_iterations=3): WorkflowRuntimeError escapes after 3 model calls; "
        "the 3rd response's tool call is never executed",
        {"max_iterations": 3},
    ),
    Task(
        "early-stop-generate",
        "calc-agent",
        calc_agent,
        "Find the warranty policy.",
        "2 years",
        [
            call(("search_docs", {"query": "warranty"})),
            call(("search_docs", {"query": "warranty policy"})),
            say("I could not find a warranty policy."),
        ],
        "FunctionAgent run(max_iterations=2, early_stopping_method='generate'): the framework "
        "makes a final model call without tools (no _prepare_chat_with_tools); wrong answer",
        {"max_iterations": 2, "early_stopping_method": "generate"},
    ),
    Task(
        "docs-nonstreaming",
        "calc-agent",
        lambda: calc_agent(streaming=False),
        "How long does shipping take?",
        "3-5 business days",
        [call(("search_docs", {"query": "shipping"})), say("3-5 business days")],
        "FunctionAgent(streaming=False): achat instead of astream_chat, 1 tool call",
    ),
    Task(
        "handoff-weather",
        "travel-desk",
        travel_desk,
        "Weather in Paris?",
        "18C and sunny",
        [
            call(handoff("weather-agent", "weather question")),
            call(("get_weather", {"city": "Paris"})),
            say("18C and sunny"),
        ],
        "AgentWorkflow: triage hands off to weather-agent (built-in handoff tool), 1 tool call",
    ),
    Task(
        "handoff-chain",
        "travel-desk",
        travel_desk,
        "Book a hotel in Rome for 2 nights and tell me the weather there.",
        "Booked Hotel Roma for 2 nights; 24C and clear",
        [
            call(handoff("booking-agent", "hotel booking")),
            call(("find_hotel", {"city": "Rome"})),
            call(("book_hotel", {"hotel": "Hotel Roma", "nights": 2})),
            call(handoff("weather-agent", "weather part")),
            call(("get_weather", {"city": "Rome"})),
            say("Booked Hotel Roma for 2 nights; 24C and clear"),
        ],
        "AgentWorkflow: 2 handoffs (triage -> booking -> weather), 3 tool calls",
    ),
    Task(
        "handoff-invalid",
        "travel-desk",
        travel_desk,
        "Refund my booking BK-9.",
        "No booking BK-9 found",
        [
            call(handoff("billing-agent", "refunds")),
            call(handoff("booking-agent", "booking question")),
            say("Your booking is confirmed."),
        ],
        "AgentWorkflow: a handoff to an unknown agent is refused by the handoff tool, the "
        "second one succeeds (1 real handoff, 0 user tools); wrong answer",
    ),
    Task(
        "handoff-parallel",
        "travel-desk",
        travel_desk,
        "Weather in Paris and Rome?",
        "Paris 18C and sunny, Rome 24C and clear",
        [
            call(handoff("weather-agent", "weather question")),
            call(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})),
            say("Paris 18C and sunny, Rome 24C and clear"),
        ],
        "AgentWorkflow: 1 handoff, then 2 parallel tool calls",
    ),
    Task(
        "react-sum",
        "react-agent",
        react_agent,
        "What is (2 + 3) * 4?",
        "20",
        [
            react("I need to add first.", "add", '{"a": 2, "b": 3}'),
            react("Now multiply.", "multiply", '{"a": 5, "b": 4}'),
            answer("I can answer now.", "20"),
        ],
        "ReActAgent (text protocol, astream_chat without tools): 2 tool calls",
    ),
    Task(
        "react-recover",
        "react-agent",
        react_agent,
        "Convert 50 USD to pounds.",
        "39.5",
        [
            react("Convert.", "convert_currency", '{"amount": 50, "currency": "POUND"}'),
            react("Use the ISO code.", "convert_currency", '{"amount": 50, "currency": "GBP"}'),
            answer("Done.", "39.5"),
        ],
        "ReActAgent: a tool raises, the agent recovers: 2 tool calls, 1 error",
    ),
    Task(
        "react-format-wrong",
        "react-agent",
        react_agent,
        "Capital of France?",
        "Paris",
        [
            say("Thought: I should look it up.\nAction: search"),
            answer("I know this.", "Lyon"),
        ],
        "ReActAgent: a malformed first response (no Action Input) makes the framework ask again; "
        "0 tool calls, 2 model calls, wrong answer",
    ),
]


NOTES = [
    "Every framework span is kind INTERNAL, scope `openinference.instrumentation.llama_index`, "
    "named `<Class>.<method>` (llama-index dispatcher spans); `openinference.span.kind` is set on "
    "all of them (CHAIN when nothing more specific), status OK set explicitly on success.",
    "No AGENT-kind span at all: the workflow agents' `FunctionAgent.run` / `ReActAgent.run` / "
    "`AgentWorkflow.run` spans are CHAIN (the instrumentor maps AGENT only for the legacy "
    "BaseAgent/BaseAgentWorker classes, gone from llama-index-core 0.14). Agent names appear only "
    "inside repr strings in `input.value`/`output.value` (`current_agent_name='weather-agent'`).",
    "Every dispatcher span of an LLM object is LLM-kind: `ScriptedLLM._prepare_chat_with_tools` "
    "(request preparation: `llm.model_name`, `llm.invocation_parameters`, input/output.value; no "
    "`llm.input_messages`, no `llm.output_messages`, no `llm.token_count.*`) is a SIBLING (same "
    "parent `run_agent_step`, ends before it starts) of the real call span "
    "`ScriptedLLM.astream_chat` (or `achat` with streaming=False), which has the messages, "
    "`llm.tools`, finish reason and "
    "`llm.token_count.prompt/completion/total` read from the raw response's `usage`. So every "
    "FunctionAgent/AgentWorkflow model call shows as two LLM spans; ReActAgent and the "
    "early-stopping 'generate' call use astream_chat without tools, hence no preparation span.",
    "Tools: `FunctionTool.acall` (TOOL) with `tool.name`, `tool.description`, `tool.parameters`, "
    "input.value = the kwargs; no tool call id on the span (the id is only in the LLM span's "
    "`llm.output_messages.*.tool_calls.*.tool_call.id`). A raising tool: TOOL span ERROR with an "
    "`exception` event; the agent catches it and the model sees the error text.",
    "AgentWorkflow handoffs are a built-in tool: a TOOL span `FunctionTool.acall` with "
    "`tool.name = handoff` (a reserved name in llama-index) and parameters `to_agent`, `reason`. "
    "A refused handoff (unknown agent) is the same span, OK status, its refusal only in "
    "output.value.",
    "ReActAgent adds CHAIN spans `ReActOutputParser.parse` (ERROR when the model's text is "
    "malformed, the framework then asks the model again).",
]


def main() -> None:
    rec = Recording(
        scenario=SCENARIO,
        out=OUT,
        description=(
            "llama-index-core workflow agents (FunctionAgent, AgentWorkflow with handoffs, "
            "ReActAgent) + a scripted FunctionCallingLLM reporting OpenAI-style usage, "
            "openinference-instrumentation-llama-index, OTLP/HTTP protobuf, "
            "BatchSpanProcessor(max_export_batch_size=6)"
        ),
    )
    instrumentor = LlamaIndexInstrumentor()
    with rec:
        providers = {
            name: rec.tracer_provider(service_name=name, transport="http", batch_size=6)
            for name in ("calc-agent", "travel-desk", "react-agent")
        }
        instrumented: str | None = None
        for task in TASKS:
            if task.service != instrumented:
                # One process per agent service in real life; here: re-point the instrumentor.
                if instrumented is not None:
                    instrumentor.uninstrument()
                instrumentor.instrument(tracer_provider=providers[task.service])
                instrumented = task.service
            SCRIPT.clear()
            SCRIPT.extend(task.turns)
            agent = task.make()
            with rec.run(
                providers[task.service], task_id=task.task_id, expected_output=task.expected
            ) as run:
                run.notes = task.notes
                out = asyncio.run(drive(agent, task.prompt, **task.run_kwargs))
                run.output = out
                run.success = out == task.expected
            if SCRIPT:
                print(
                    f"WARNING {task.task_id}: {len(SCRIPT)} scripted turns unused", file=sys.stderr
                )
            print(
                f"{task.task_id}: {run.outcome} tools={run.tool_calls} llm={run.llm_calls} "
                f"handoffs={run.handoffs} out={run.output!r} err={run.error}"
            )
        rec.flush()
    instrumentor.uninstrument()
    rec.finish(
        packages=[
            "llama-index-core",
            "llama-index-workflows",
            "llama-index-instrumentation",
            "openinference-instrumentation-llama-index",
            "openinference-instrumentation",
            "openinference-semantic-conventions",
        ],
        notes=NOTES,
    )


if __name__ == "__main__":
    main()

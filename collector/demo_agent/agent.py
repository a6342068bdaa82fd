"""The demo agent's loop: model, tools, model, each call one GenAI-convention span.

Spans go through whatever tracer it is given (the server's SDK provider),
under the current context, so behind the ASGI middleware they continue the
screener's trace. What the model says is drawn from a generator seeded by
the task id and the round, so the same task in the same round gives the
same answer, tool calls and tokens in every variant but for what the
variant changes. How long each call takes is drawn from a second generator
that also takes the screening id, as a network would vary: with timings
identical across screenings, the shift any load on the machine puts on a
whole screening would move every task the same way, and compare's paired
test would call a few milliseconds a regression.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from collector.demo_agent.chat import MODEL_NAME, Reply, ToolCall, ToolResult
from collector.demo_agent.model import ScriptedModel
from collector.demo_agent.tools import ToolError, call_tool
from collector.demo_agent.variants import Variant

AGENT_NAME: Final = "concierge"
PROVIDER: Final = "badge-demo"  # gen_ai.provider.name: no real provider is called
MAX_TURNS: Final = 6  # a loop that does not converge answers rather than spinning
MODEL_DELAY_S: Final = (0.02, 0.12)  # a model call's own time, before a variant adds to it
TOOL_DELAY_S: Final = (0.002, 0.01)  # a table lookup's


@dataclass(frozen=True, slots=True)
class Answer:
    """The final text and what it took: the endpoint's answer, and evidence for the tests."""

    output: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    model_calls: int
    tool_calls: tuple[str, ...]
    tool_errors: int

    def body(self, variant: str) -> dict[str, Any]:
        """The endpoint contract's answer; the fields beyond it are kept as evidence."""
        return {
            "output": self.output,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_cost_usd": round(self.cost_usd, 9),
            "model": MODEL_NAME,
            "variant": variant,
            "model_calls": self.model_calls,
            "tool_calls": list(self.tool_calls),
            "tool_errors": self.tool_errors,
        }


def seed_of(*parts: object) -> int:
    """Stable across processes and Python versions (unlike hash())."""
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big")


class DemoAgent:
    def __init__(
        self, tracer: Tracer, variant: Variant, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        self.tracer = tracer
        self.variant = variant
        self.sleep = sleep

    def answer(
        self, prompt: str, task_id: str, round_number: int, max_tokens: int, screening_id: str = ""
    ) -> Answer:
        rng = random.Random(seed_of(task_id, round_number))
        model = ScriptedModel(self.variant.quirks(rng), rng)
        clock = random.Random(seed_of(screening_id, task_id, round_number))
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": AGENT_NAME,
            "gen_ai.provider.name": PROVIDER,
            "badge.demo.variant": self.variant.name,
        }
        replies: list[Reply] = []
        seen: list[ToolResult] = []
        with self.tracer.start_as_current_span(f"invoke_agent {AGENT_NAME}", attributes=attributes):
            for _ in range(MAX_TURNS):
                reply = self._chat(model, prompt, seen, clock, max_tokens)
                replies.append(reply)
                if not reply.calls:
                    break
                seen.extend(self._tool(call, clock) for call in reply.calls)
        return Answer(
            output=replies[-1].text if not replies[-1].calls else "Sorry, I ran out of turns.",
            input_tokens=sum(r.input_tokens for r in replies),
            output_tokens=sum(r.output_tokens for r in replies),
            cost_usd=sum(r.cost_usd for r in replies),
            model_calls=len(replies),
            tool_calls=tuple(r.call.name for r in seen),
            tool_errors=sum(r.error is not None for r in seen),
        )

    def _chat(
        self,
        model: ScriptedModel,
        prompt: str,
        seen: list[ToolResult],
        clock: random.Random,
        max_tokens: int,
    ) -> Reply:
        with self.tracer.start_as_current_span(f"chat {MODEL_NAME}", kind=SpanKind.CLIENT) as span:
            reply = model.respond(prompt, seen)
            self.sleep(clock.uniform(*MODEL_DELAY_S) + self.variant.extra_model_delay_s)
            span.set_attributes(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": PROVIDER,
                    "gen_ai.request.model": MODEL_NAME,
                    "gen_ai.response.model": MODEL_NAME,
                    "gen_ai.request.max_tokens": max_tokens,
                    "gen_ai.usage.input_tokens": reply.input_tokens,
                    "gen_ai.usage.output_tokens": reply.output_tokens,
                    "gen_ai.usage.cost": round(reply.cost_usd, 9),
                    "gen_ai.response.finish_reasons": [reply.finish_reason],
                }
            )
        return reply

    def _tool(self, call: ToolCall, clock: random.Random) -> ToolResult:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": json.dumps(call.arguments),
        }
        with self.tracer.start_as_current_span(
            f"execute_tool {call.name}", attributes=attributes, record_exception=False
        ) as span:
            self.sleep(clock.uniform(*TOOL_DELAY_S))
            try:
                value = call_tool(call.name, call.arguments)
            except ToolError as exc:
                span.set_status(Status(StatusCode.ERROR, str(exc)))
                span.set_attribute("error.type", type(exc).__name__)
                return ToolResult(call, None, str(exc))
            span.set_attribute("gen_ai.tool.call.result", json.dumps(value))
            return ToolResult(call, value)

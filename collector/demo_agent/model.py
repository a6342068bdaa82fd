"""The demo agent's scripted model: a chat model's interface, rules instead of weights.

A real model would need the network and would answer differently every
time; a screening demo needs neither. Like a chat completion with tools,
each `respond` sees the prompt and the tool results so far and answers
either with tool calls or with the final text, so the agent around it runs
the usual loop (model, tools, model) and every turn is one `chat` span.
What the model "knows" is in `skills`; how this variant's model goes wrong
is its `Quirks`. Token counts are derived from the text it read and wrote,
so they are the same for the same task and round.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from collector.demo_agent.chat import (
    SYSTEM_PROMPT_TOKENS,
    Quirks,
    Reply,
    ToolCall,
    ToolResult,
    tokens,
)
from collector.demo_agent.skills import plan


@dataclass
class ScriptedModel:
    """One run's model: its quirks, its random source (seeded by task and round), its call ids."""

    quirks: Quirks
    rng: random.Random
    _calls: int = field(default=0)

    def respond(self, prompt: str, results: list[ToolResult]) -> Reply:
        step = plan(prompt, results, self.quirks)
        calls: tuple[ToolCall, ...] = ()
        if isinstance(step, str):
            text = step
        else:
            calls = tuple(self._call(name, arguments) for name, arguments in step)
            text = json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls])
        heard = [r.value if r.error is None else r.error for r in results]
        read = prompt + "".join(json.dumps(value) for value in heard)
        thinking = self.rng.randint(8, 24)  # tokens spent before answering
        return Reply(text, calls, SYSTEM_PROMPT_TOKENS + tokens(read), tokens(text) + thinking)

    def _call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        self._calls += 1
        return ToolCall(f"call_{self._calls}", name, arguments)

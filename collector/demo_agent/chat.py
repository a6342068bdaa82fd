"""What passes between the demo agent and its model: tool calls, results, replies, quirks.

The shapes of a chat API with tools, kept apart from the scripted model
(`model`) and its rules (`skills`) so that both can name them without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

MODEL_NAME: Final = "scripted-concierge-1"
SYSTEM_PROMPT_TOKENS: Final = 180  # the instructions a real agent would send on every call
# A made-up price list (USD per million tokens), so the cost axis has something to read.
INPUT_PRICE_PER_M: Final = 0.40
OUTPUT_PRICE_PER_M: Final = 1.60


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asks for; `id` pairs it with its result, as in a chat API."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    call: ToolCall
    value: Any
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """Tool calls to make, or (with none) the final answer in `text`."""

    text: str
    calls: tuple[ToolCall, ...]
    input_tokens: int
    output_tokens: int

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.calls else "stop"

    @property
    def cost_usd(self) -> float:
        priced = self.input_tokens * INPUT_PRICE_PER_M + self.output_tokens * OUTPUT_PRICE_PER_M
        return priced / 1_000_000


@dataclass(frozen=True, slots=True)
class Quirks:
    """How the variant's model goes wrong on one run (baseline: not at all)."""

    refund_region: str = "US"  # `broken` looks up the wrong region's policy
    misread_city: bool = False  # `flaky` confuses Oslo with Osaka on half the runs


def tokens(text: str) -> int:
    """Roughly four characters a token, as English text goes."""
    return max(1, len(text) // 4)

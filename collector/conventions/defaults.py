"""Where a value is read when no convention says (RUNS.md "Run fields" and
"Classifying a span"; CONVENTIONS.md section 3: "where a convention gives no
`usage`, the built-in GenAI keys apply"). One source per value, each the
keys in the order RUNS.md gives them: the first that carries one wins.

A rule without `tool_name`, `call_id` or `model`, and a convention without
one of the `usage` fields, read these instead.
"""

from __future__ import annotations

from collector.conventions.sources import attributes

TOOL_NAME = attributes("gen_ai.tool.name", "tool.name", "mcp.tool.name", "ai.toolCall.name")
CALL_ID = attributes("gen_ai.tool.call.id", "tool.id", "ai.toolCall.id")
MODEL = attributes("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
INPUT_TOKENS = attributes(
    "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"
)
OUTPUT_TOKENS = attributes(
    "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"
)
# gen_ai.usage.cost.amount: the GenAI conventions' open proposal for a reported cost.
COST_USD = attributes(
    "gen_ai.usage.cost", "gen_ai.usage.cost.amount", "llm.cost.total", "operation.cost"
)

KEYS = frozenset().union(
    *(s.keys for s in (TOOL_NAME, CALL_ID, MODEL, INPUT_TOKENS, OUTPUT_TOKENS, COST_USD))
)

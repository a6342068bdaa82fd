"""Attribute names of the conventions docs/runs.md reads, in one place."""

from __future__ import annotations

from typing import Final

LLM_OPERATIONS: Final = frozenset(
    {"chat", "text_completion", "generate_content", "completion", "generate"}
)
AGENT_OPERATIONS: Final = frozenset({"invoke_agent", "invoke_workflow"})
VERCEL_AGENT_OPERATIONS: Final = frozenset(
    {"ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject"}
)
MODEL_KEYS: Final = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
USAGE_PREFIXES: Final = ("gen_ai.usage.", "llm.token_count.")

INPUT_TOKEN_KEYS: Final = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.prompt",
)
OUTPUT_TOKEN_KEYS: Final = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)
AGG_INPUT_KEYS: Final = (
    "gen_ai.aggregated_usage.input_tokens",
    "gen_ai.aggregated_usage.prompt_tokens",
)
AGG_OUTPUT_KEYS: Final = (
    "gen_ai.aggregated_usage.output_tokens",
    "gen_ai.aggregated_usage.completion_tokens",
)
COST_KEYS: Final = ("gen_ai.usage.cost", "llm.cost.total", "operation.cost")
TASK_KEYS: Final = ("badge.task.id", "gen_ai.task.id", "langfuse.experiment.item.id")
TOOL_NAME_KEYS: Final = ("gen_ai.tool.name", "tool.name", "mcp.tool.name", "ai.toolCall.name")
TOOL_CALL_ID_KEYS: Final = ("gen_ai.tool.call.id", "tool.id", "ai.toolCall.id")
# An agent's version: on the root (badge.agent.version, then gen_ai.agent.version),
# then the outermost agent span, then the root's resource (service.version).
VERSION_KEYS: Final = ("badge.agent.version", "gen_ai.agent.version")
RESOURCE_VERSION_KEY: Final = "service.version"

# Span events read by name (docs/runs.md, docs/loop.md "Graded outcomes").
EXCEPTION_EVENT: Final = "exception"
EVALUATION_EVENT: Final = "gen_ai.evaluation.result"
SELECTED_EVENTS: Final = frozenset({EXCEPTION_EVENT, EVALUATION_EVENT})
EVALUATION_LABEL_KEY: Final = "gen_ai.evaluation.score.label"
EVALUATION_SCORE_KEY: Final = "gen_ai.evaluation.score.value"
EVALUATION_EXPLANATION_KEY: Final = "gen_ai.evaluation.explanation"
# An evaluation label, case-insensitive, as an outcome.
PASS_LABELS: Final = frozenset({"pass", "passed", "true", "success", "correct"})
FAIL_LABELS: Final = frozenset({"fail", "failed", "false", "failure", "incorrect"})

CLASSIFY_KEYS: Final = (
    "langfuse.observation.type",
    "openinference.span.kind",
    "gen_ai.operation.name",
    "traceloop.span.kind",
    "langsmith.span.kind",
    "mcp.method.name",
    "ai.operationId",
    "operation.name",
    "logfire.msg",
    "pydantic_ai.tool.failure_stage",
    "llm.request.type",
)
RUN_KEYS: Final = (
    "badge.run.id",
    "badge.run.success",
    "badge.run.status",
    "badge.cost.usd",
    "gen_ai.task.status",
    "gen_ai.evaluation.score.label",
    "error.type",
)

SELECTED_KEYS: Final = frozenset(
    CLASSIFY_KEYS
    + RUN_KEYS
    + MODEL_KEYS
    + INPUT_TOKEN_KEYS
    + OUTPUT_TOKEN_KEYS
    + AGG_INPUT_KEYS
    + AGG_OUTPUT_KEYS
    + COST_KEYS
    + TASK_KEYS
    + TOOL_NAME_KEYS
    + TOOL_CALL_ID_KEYS
    + VERSION_KEYS
)

"""Attribute names of the conventions docs/runs.md reads, in one place."""

from __future__ import annotations

from typing import Final

STATUS_ERROR: Final = 2  # OTLP Status.code ERROR

LLM_OPERATIONS: Final = frozenset(
    {"chat", "text_completion", "generate_content", "completion", "generate"}
)
AGENT_OPERATIONS: Final = frozenset({"invoke_agent", "invoke_workflow"})
# GenAI operations that are no tool step whatever else marks the span: running
# a workflow, planning, creating an agent, and the memory operations of the
# GenAI conventions (docs/runs.md "Not a step").
NON_STEP_OPERATIONS: Final = frozenset(
    {
        "invoke_workflow",
        "plan",
        "create_agent",
        "create_memory",
        "create_memory_store",
        "delete_memory",
        "delete_memory_store",
        "search_memory",
        "update_memory",
        "upsert_memory",
    }
)
# gen_ai.operation.name of a handoff between agents (OpenLLMetry's openai-agents
# instrumentation, and any framework that names it so).
HANDOFF_OPERATIONS: Final = frozenset({"handoff", "transfer", "agent_handoff"})
# Tool names frameworks give their built-in tools that hand control to another
# agent: google-adk's `transfer_to_agent` (the target is an argument) and
# llama-index's reserved `handoff`.
HANDOFF_TOOLS: Final = frozenset({"transfer_to_agent", "handoff"})
# A tool named for the agent it hands over to: `transfer_to_<agent>` (OpenAI
# Swarm and Agents SDK, AutoGen Swarm, LangGraph swarm and supervisor,
# Semantic Kernel's handoff orchestration), `transfer_back_to_<agent>`
# (LangGraph supervisor), `handoff_to_<agent>`. A handoff only when <agent>
# is an agent of the trace, so a user's `transfer_to_savings` stays a step.
HANDOFF_PREFIXES: Final = ("transfer_to_", "transfer_back_to_", "handoff_to_")
# Built-in tools that only hand the answer back or end the agent's loop, so
# they are no step: smolagents' (and BeeAI's) `final_answer`, pydantic-ai's
# output tool `final_result`, google-adk's `set_model_response` (structured
# output) and `exit_loop`, Semantic Kernel's handoff `complete_task`.
CONTROL_TOOLS: Final = frozenset(
    {"final_answer", "final_result", "set_model_response", "exit_loop", "complete_task"}
)
# Where a framework puts a tool's namespace before its name: Semantic Kernel
# `Plugin-function`, MCP `server.tool` or `server__tool`, `server:tool`, `a/b`.
TOOL_NAMESPACE_SEPARATORS: Final = ("-", ".", "__", ":", "/")
AGENT_NAME_KEYS: Final = ("gen_ai.agent.name", "agent.name")
AGENT_SPAN_PREFIX: Final = "invoke_agent "  # GenAI span name: `invoke_agent {gen_ai.agent.name}`
TOOL_TYPE_KEYS: Final = ("gen_ai.tool.type",)
# Attributes that carry what was sent to a model or came back: an LLM-kind
# span with none of these and no usage made no model call of its own (a
# request being prepared). Only their presence is read (proto markers).
CONTENT_MARKERS: Final = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.prompt",
    "gen_ai.completion",
    "gen_ai.system_instructions",
    "llm.input_messages",
    "llm.output_messages",
    "llm.prompts",
    "ai.prompt",
    "ai.response",
)
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
# gen_ai.usage.cost.amount: the GenAI conventions' open proposal for a reported cost.
COST_KEYS: Final = (
    "gen_ai.usage.cost",
    "gen_ai.usage.cost.amount",
    "llm.cost.total",
    "operation.cost",
)
TASK_KEYS: Final = ("badge.task.id", "gen_ai.task.id", "langfuse.experiment.item.id")
TOOL_NAME_KEYS: Final = ("gen_ai.tool.name", "tool.name", "mcp.tool.name", "ai.toolCall.name")
TOOL_CALL_ID_KEYS: Final = ("gen_ai.tool.call.id", "tool.id", "ai.toolCall.id")
# An agent's version: on the root (badge.agent.version, then gen_ai.agent.version),
# then the outermost agent span, then the root's resource (service.version).
VERSION_KEYS: Final = ("badge.agent.version", "gen_ai.agent.version")
RESOURCE_VERSION_KEY: Final = "service.version"
# What a screening's root span says of it (docs/screening.md, SCREEN.md section 4).
SCREENING_KEYS: Final = (
    "badge.screening.id",
    "badge.screening.round",
    "badge.suite.name",
    "badge.suite.digest",
)

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
    + AGENT_NAME_KEYS
    + TOOL_TYPE_KEYS
    + SCREENING_KEYS
)

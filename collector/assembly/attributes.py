"""The attribute names run assembly reads itself: RUNS.md's engine rules and
run fields, which hold for every instrumentation family.

Which span is a tool, an LLM call or an agent, and where a tool's name, a
model, tokens and cost are, is the conventions' (collector.conventions and
its built-in files); what is here is read whatever family the span is of.
"""

from __future__ import annotations

from typing import Final

STATUS_ERROR: Final = 2  # OTLP Status.code ERROR

# A tool named for the agent it hands over to: `transfer_to_<agent>` (OpenAI
# Swarm and Agents SDK, AutoGen Swarm, LangGraph swarm and supervisor,
# Semantic Kernel's handoff orchestration), `transfer_back_to_<agent>`
# (LangGraph supervisor), `handoff_to_<agent>`. A handoff only when <agent>
# is an agent of the trace, so a user's `transfer_to_savings` stays a step.
HANDOFF_PREFIXES: Final = ("transfer_to_", "transfer_back_to_", "handoff_to_")
# Where a framework puts a tool's namespace before its name: Semantic Kernel
# `Plugin-function`, MCP `server.tool` or `server__tool`, `server:tool`, `a/b`.
TOOL_NAMESPACE_SEPARATORS: Final = ("-", ".", "__", ":", "/")
# An agent's name, so a tool named for it is a handoff (RUNS.md "handoffs").
AGENT_NAME_KEYS: Final = ("gen_ai.agent.name", "agent.name")
AGENT_SPAN_PREFIX: Final = "invoke_agent "  # GenAI span name: `invoke_agent {gen_ai.agent.name}`
TOOL_TYPE_KEYS: Final = ("gen_ai.tool.type",)  # says transfer or handoff: a handoff
# pydantic-ai: a call whose arguments failed validation never ran; its
# convention makes it no step, and it counts in the run's tool_errors.
VALIDATION_KEY: Final = "pydantic_ai.tool.failure_stage"
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
# Of those, the ones that carry what came back from the model: an LLM span
# with what was sent but none of these and no usage reported its request
# only (its answer may be a sibling span's: assembly.counting).
OUTPUT_MARKERS: Final = (
    "gen_ai.output.messages",
    "gen_ai.completion",
    "llm.output_messages",
    "ai.response",
)
# The tool calls a model requested, on its LLM span (RUNS.md "Run fields",
# `steps_source`): the steps of a run that has no tool span. Only what came
# back counts: the input (`gen_ai.input.messages`, `gen_ai.prompt.*`,
# `llm.input_messages.*`) repeats every earlier turn's calls.
# - GenAI: `gen_ai.output.messages`, JSON text, parts of type `tool_call`;
# - OpenInference: `llm.output_messages.<i>.message.tool_calls.<j>.tool_call.*`;
# - OpenLLMetry (before 0.55): `gen_ai.completion.<i>.tool_calls.<j>.*`.
# The indexed keys are lifted by the tails of their markers (proto Selection).
REQUESTED_MESSAGES_KEY: Final = "gen_ai.output.messages"
REQUESTED_TAILS: Final = {
    "llm.output_messages": (".tool_call.function.name", ".tool_call.id"),
    "gen_ai.completion": (".name", ".id"),
}
# Usage keys of any name under these say a span reports usage (the same
# rule); proto lifts every key under them.
USAGE_PREFIXES: Final = ("gen_ai.usage.", "llm.token_count.")
# An agent's or the root's run totals (RUNS.md "Run fields": read only when
# no LLM call carries usage, never summed over nested agents).
AGG_INPUT_KEYS: Final = (
    "gen_ai.aggregated_usage.input_tokens",
    "gen_ai.aggregated_usage.prompt_tokens",
)
AGG_OUTPUT_KEYS: Final = (
    "gen_ai.aggregated_usage.output_tokens",
    "gen_ai.aggregated_usage.completion_tokens",
)
TASK_KEYS: Final = ("badge.task.id", "gen_ai.task.id", "langfuse.experiment.item.id")
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

RUN_KEYS: Final = (
    "badge.run.id",
    "badge.run.success",
    "badge.run.status",
    "badge.cost.usd",
    "gen_ai.task.status",
    "gen_ai.evaluation.score.label",
    "error.type",
)

# What assembly itself needs lifted at decode; the conventions add the keys
# their rules and sources read (collector.ingest.decoding builds the Selection).
ENGINE_KEYS: Final = frozenset(
    RUN_KEYS
    + AGG_INPUT_KEYS
    + AGG_OUTPUT_KEYS
    + TASK_KEYS
    + VERSION_KEYS
    + AGENT_NAME_KEYS
    + TOOL_TYPE_KEYS
    + SCREENING_KEYS
    + (VALIDATION_KEY, REQUESTED_MESSAGES_KEY)
)

"""The names of span facts: what ingest reduces a span to for run assembly.

Facts are stored per span as compact JSON (collector.assembly.facts), so the
stored key is short; code reads them through these names, never the short
keys (issue 31: `facts.get("bcost")` told a reader nothing).
"""

from __future__ import annotations

from typing import Final

TOOL_NAME: Final = (
    "tool"  # the tool's name (gen_ai.tool.name, tool.name, mcp.tool.name, ai.toolCall.name)
)
CALL_ID: Final = "call"  # the tool call's id
INPUT_TOKENS: Final = "in"  # input tokens of an LLM call
OUTPUT_TOKENS: Final = "out"  # output tokens of an LLM call
AGG_INPUT_TOKENS: Final = "ain"  # an agent span's run-total input tokens
AGG_OUTPUT_TOKENS: Final = "aout"  # an agent span's run-total output tokens
COST: Final = "cost"  # an LLM call's reported cost
TASK: Final = "task"  # badge.task.id and its kin
RUN_COST: Final = "bcost"  # badge.cost.usd: the run's own total
RUN_ID: Final = "run"  # badge.run.id (the span's or its resource's)
RUN_SUCCESS: Final = "succ"  # badge.run.success
TASK_STATUS: Final = "tstat"  # gen_ai.task.status
EVAL_LABEL: Final = "eval"  # gen_ai.evaluation.score.label, as an attribute
RUN_STATUS: Final = "rstat"  # badge.run.status
ERROR_TYPE: Final = "err"  # error.type
VALIDATION_FAILED: Final = "vfail"  # pydantic-ai: the call's arguments failed validation
BADGE_VERSION: Final = "bver"  # badge.agent.version
GENAI_VERSION: Final = "gver"  # gen_ai.agent.version
RESOURCE_VERSION: Final = "rver"  # service.version of the span's resource
RESOURCE_TASK: Final = "rtask"  # a task id of the span's resource
WHY_NOT: Final = "why"  # why a tool span was no step (spans stored before conventions)
EXCEPTION_TYPE: Final = "exc"  # the type of the first exception event
EVENT_LABEL: Final = "evl"  # the evaluation event's label
EVENT_SCORE: Final = "evs"  # the evaluation event's score
EVENT_EXPLANATION: Final = "evx"  # the evaluation event's explanation
EVENT_TIME: Final = "evt"  # the evaluation event's time (ns)
AGENT_NAME: Final = "aname"  # an agent span's agent name
TOOL_TYPE: Final = "ttype"  # a tool span's gen_ai.tool.type
MODEL: Final = "model"  # an LLM span's model
SAYS_NOTHING: Final = "bare"  # an LLM span with no usage, cost or messages
NO_ANSWER: Final = "ask"  # an LLM span with what was sent, but no usage, cost or output
REQUESTED: Final = "req"  # how many tool calls an LLM span says the model requested
REQUESTED_NAMES: Final = "reqn"  # their tool names, in order ("" for a call without one)
SCREENING: Final = "scr"  # badge.screening.id
SCREENING_ROUND: Final = "srnd"  # badge.screening.round
SUITE_NAME: Final = "suite"  # badge.suite.name
SUITE_DIGEST: Final = "sdig"  # badge.suite.digest
IGNORED: Final = "ign"  # attribute key -> why its count or cost was not taken ("negative")

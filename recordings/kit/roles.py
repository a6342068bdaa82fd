"""The naive role of a span, by its attributes (the summary's "role (by attributes)" column).

It follows the classification markers of docs RUNS.md ("Classifying a span") but none of its
exclusions (output tools, nested duplicates, handoffs...): it shows what a span says it is, so
that the summary's naive counts can be compared with the ground truth.
"""

from __future__ import annotations

from typing import Any

ROLE_ORDER = ("root", "agent", "chain", "llm", "tool", "other")
LLM_OPERATIONS = {"chat", "text_completion", "generate_content", "completion", "generate"}
AGENT_OPERATIONS = {"invoke_agent", "create_agent"}
VERCEL_AGENT_OPS = {"ai.generatetext", "ai.streamtext", "ai.generateobject", "ai.streamobject"}
MODEL_KEYS = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
USAGE_PREFIXES = ("gen_ai.usage.", "llm.token_count.")


def _low(attrs: dict[str, Any], key: str) -> str:
    value = attrs.get(key)
    return str(value).strip().lower() if value is not None else ""


def role(name: str, attrs: dict[str, Any], is_root: bool = False) -> str:
    """One of root, agent, chain, llm, tool, other."""
    if is_root:
        return "root"
    langfuse = _low(attrs, "langfuse.observation.type")
    oi = _low(attrs, "openinference.span.kind")
    op = _low(attrs, "gen_ai.operation.name")
    traceloop = _low(attrs, "traceloop.span.kind")
    langsmith = _low(attrs, "langsmith.span.kind")
    vercel = _low(attrs, "ai.operationId") or _low(attrs, "operation.name")

    if (
        langfuse == "tool"
        or oi == "tool"
        or op == "execute_tool"
        or traceloop == "tool"
        or langsmith == "tool"
        or _low(attrs, "mcp.method.name") == "tools/call"
        or vercel.startswith("ai.toolcall")
        or (("gen_ai.tool.name" in attrs or "gen_ai.tool.call.id" in attrs) and not op)
        or name.strip().lower() == "running tool"
    ):
        return "tool"
    if langfuse == "generation" or oi == "llm":
        return "llm"
    if langsmith and langsmith != "llm":
        pass
    elif (
        langsmith == "llm"
        or op in LLM_OPERATIONS
        or _low(attrs, "llm.request.type") in {"chat", "completion"}
        or vercel.endswith(".dogenerate")
        or vercel.endswith(".dostream")
    ):
        return "llm"
    if (
        oi == "agent"
        or op in AGENT_OPERATIONS
        or traceloop == "agent"
        or langfuse == "agent"
        or name.strip().lower() == "agent run"
        or vercel in VERCEL_AGENT_OPS
    ):
        return "agent"
    if oi == "chain" or traceloop in {"workflow", "task"} or op == "invoke_workflow":
        return "chain"
    if langsmith in {"chain"}:
        return "chain"
    has_model = any(key in attrs for key in MODEL_KEYS)
    has_usage = any(key.startswith(USAGE_PREFIXES) for key in attrs)
    if has_model and has_usage and not (oi or traceloop or op or langsmith):
        return "llm"
    return "other"


def usage(attrs: dict[str, Any]) -> tuple[int, int]:
    """(input, output) tokens of an LLM span, by the RUNS.md key precedence; 0 when absent."""

    def first(*keys: str) -> int:
        for key in keys:
            if key in attrs:
                try:
                    return int(float(attrs[key]))
                except (TypeError, ValueError):
                    continue
        return 0

    return (
        first("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
        first(
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        ),
    )

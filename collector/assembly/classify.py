"""docs/runs.md "How a span is classified": first match wins; the rule is kept as a reason.

Works on the attributes `proto` lifted (conventions.SELECTED_KEYS). Whether a
tool or LLM span is *counted* also depends on its ancestors; that part lives
in `runs.py`. Here: what the span itself says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from collector.assembly import conventions as c

TOOL, LLM, AGENT, OTHER = "tool", "llm", "agent", "other"


class Classification(NamedTuple):
    """What a span says it is; a NamedTuple, built once per span at ingest."""

    role: str
    rule: str
    counted: bool = True  # False: a tool that is shown but not a step
    why_not: str = ""


def norm(value: Any) -> str:
    """Enum-like values compare case-insensitively (docs/runs.md "How a span is classified")."""
    return str(value).strip().lower() if value is not None else ""


def classify(name: str, attrs: Mapping[str, Any]) -> Classification:
    tool = _tool_rule(name, attrs)
    if tool is not None:
        return _tool_exclusions(name, attrs, tool)
    llm = _llm_rule(attrs)
    if llm is not None:
        return Classification(LLM, llm)
    agent = _agent_rule(name, attrs)
    if agent is not None:
        return Classification(AGENT, agent)
    return Classification(OTHER, "no rule matched")


def _tool_rule(name: str, attrs: Mapping[str, Any]) -> str | None:
    if norm(attrs.get("langfuse.observation.type")) == "tool":
        return "langfuse.observation.type=tool"
    if norm(attrs.get("openinference.span.kind")) == "tool":
        return "openinference.span.kind=TOOL"
    operation = norm(attrs.get("gen_ai.operation.name"))
    if operation == "execute_tool":
        return "gen_ai.operation.name=execute_tool"
    if norm(attrs.get("traceloop.span.kind")) == "tool":
        return "traceloop.span.kind=tool"
    if norm(attrs.get("langsmith.span.kind")) == "tool":
        return "langsmith.span.kind=tool"
    if norm(attrs.get("mcp.method.name")) == "tools/call":
        return "mcp.method.name=tools/call"
    for key in ("ai.operationId", "operation.name"):
        if str(attrs.get(key, "")).startswith("ai.toolCall"):
            return f"{key}=ai.toolCall*"
    has_tool_key = "gen_ai.tool.name" in attrs or "gen_ai.tool.call.id" in attrs
    if has_tool_key and not operation:
        return "fallback: gen_ai.tool.* without another operation"
    if name == "running tool" or name.startswith("running tool:"):
        return "fallback: span name 'running tool'"
    if _is_output_function(name, attrs):
        return "output function"
    return None


def _is_output_function(name: str, attrs: Mapping[str, Any]) -> bool:
    marker = "running output function"
    return name.startswith(marker) or str(attrs.get("logfire.msg", "")).startswith(marker)


def _tool_exclusions(name: str, attrs: Mapping[str, Any], rule: str) -> Classification:
    """Tools that are shown but are no step, each by the convention it follows
    (docs/runs.md "Not a step"). What needs the rest of the trace (a handoff
    named for an agent, a repeated call) is decided in runs.py."""
    if _is_output_function(name, attrs):
        return Classification(TOOL, rule, False, "output function, not a step")
    if norm(attrs.get("pydantic_ai.tool.failure_stage")) == "validation":
        return Classification(TOOL, rule, False, "arguments failed validation; never ran")
    operation = norm(attrs.get("gen_ai.operation.name"))
    if operation in c.HANDOFF_OPERATIONS:
        return Classification(TOOL, rule, False, f"gen_ai.operation.name={operation}: a handoff")
    if operation in c.NON_STEP_OPERATIONS:
        return Classification(TOOL, rule, False, f"gen_ai.operation.name={operation}: no tool step")
    if name.startswith("handoff to ") and "tool.name" not in attrs:
        return Classification(TOOL, rule, False, "handoff, not a tool step")
    tool = tool_name(attrs)
    if tool is None:
        return Classification(TOOL, rule)
    if is_placeholder(tool):
        return Classification(
            TOOL, rule, False, f"{tool!r} stands for the tool calls beside it, not a step"
        )
    bare = bare_names(tool)
    if bare & c.HANDOFF_TOOLS:
        return Classification(TOOL, rule, False, f"{tool}: the framework's handoff tool")
    if bare & c.CONTROL_TOOLS:
        return Classification(
            TOOL, rule, False, f"{tool}: hands back the answer or ends the loop, not a step"
        )
    return Classification(TOOL, rule)


def tool_name(attrs: Mapping[str, Any]) -> str | None:
    for key in c.TOOL_NAME_KEYS:
        value = attrs.get(key)
        if value is not None and value != "":
            return str(value)
    return None


def is_placeholder(tool: str) -> bool:
    """A name no tool is called, standing for several: google-adk names the
    span it emits beside a response's parallel calls `(merged tools)`."""
    text = tool.strip()
    return len(text) >= 2 and (text[0], text[-1]) in {("(", ")"), ("<", ">"), ("[", "]")}


def bare_names(tool: str) -> set[str]:
    """The tool's name, and its name without a namespace (`Plugin-name`,
    `server.name`, `server__name`), lower-cased."""
    found = {tool.strip().lower()}
    for separator in c.TOOL_NAMESPACE_SEPARATORS:
        if separator in tool:
            found.add(tool.rsplit(separator, 1)[1].strip().lower())
    return found


def _llm_rule(attrs: Mapping[str, Any]) -> str | None:
    if norm(attrs.get("langfuse.observation.type")) == "generation":
        return "langfuse.observation.type=generation"
    if norm(attrs.get("openinference.span.kind")) == "llm":
        return "openinference.span.kind=LLM"
    if "langsmith.span.kind" in attrs:
        kind = norm(attrs["langsmith.span.kind"])
        return "langsmith.span.kind=llm" if kind == "llm" else None
    if norm(attrs.get("gen_ai.operation.name")) in c.LLM_OPERATIONS:
        return f"gen_ai.operation.name={norm(attrs['gen_ai.operation.name'])}"
    if norm(attrs.get("llm.request.type")) in {"chat", "completion"}:
        return f"llm.request.type={norm(attrs['llm.request.type'])}"
    operation_id = str(attrs.get("ai.operationId", ""))
    if operation_id.endswith((".doGenerate", ".doStream")):
        return "ai.operationId=*.doGenerate/doStream"
    has_model = any(key in attrs for key in c.MODEL_KEYS)
    has_usage = any(key.startswith(c.USAGE_PREFIXES) for key in attrs)
    if has_model and has_usage and not _has_marker(attrs):
        return "fallback: model and token usage"
    return None


def _has_marker(attrs: Mapping[str, Any]) -> bool:
    """An agent, tool or chain marker of any convention."""
    return (
        "openinference.span.kind" in attrs
        or "traceloop.span.kind" in attrs
        or "langfuse.observation.type" in attrs
        or norm(attrs.get("gen_ai.operation.name")) in c.AGENT_OPERATIONS | {"execute_tool"}
        or str(attrs.get("ai.operationId", "")) in c.VERCEL_AGENT_OPERATIONS
    )


def _agent_rule(name: str, attrs: Mapping[str, Any]) -> str | None:
    if norm(attrs.get("openinference.span.kind")) == "agent":
        return "openinference.span.kind=AGENT"
    operation = norm(attrs.get("gen_ai.operation.name"))
    if operation in c.AGENT_OPERATIONS:
        return f"gen_ai.operation.name={operation}"
    kind = norm(attrs.get("traceloop.span.kind"))
    if kind in {"agent", "workflow"}:
        return f"traceloop.span.kind={kind}"
    if norm(attrs.get("langfuse.observation.type")) == "agent":
        return "langfuse.observation.type=agent"
    if name == "agent run":
        return "span name 'agent run'"
    if str(attrs.get("ai.operationId", "")) in c.VERCEL_AGENT_OPERATIONS:
        return "ai.operationId=ai.generateText & co."
    return None

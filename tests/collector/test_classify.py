"""docs/runs.md "How a span is classified": one test per convention and rule,
through the built-in convention files (collector/conventions/builtin)."""

from __future__ import annotations

from typing import Any

import pytest

from collector.conventions import builtin_set

CASES: list[tuple[str, dict[str, Any], str, bool]] = [
    ("x", {"langfuse.observation.type": "tool"}, "tool", True),
    ("x", {"openinference.span.kind": "TOOL"}, "tool", True),
    ("x", {"gen_ai.operation.name": "execute_tool"}, "tool", True),
    ("x", {"traceloop.span.kind": "tool"}, "tool", True),
    ("x", {"langsmith.span.kind": "TOOL"}, "tool", True),
    ("x", {"mcp.method.name": "tools/call"}, "tool", True),
    ("x", {"ai.operationId": "ai.toolCall"}, "tool", True),
    ("x", {"operation.name": "ai.toolCall fn"}, "tool", True),
    ("x", {"gen_ai.tool.name": "search"}, "tool", True),
    ("x", {"gen_ai.tool.call.id": "c1"}, "tool", True),
    ("running tool", {}, "tool", True),
    ("running output function", {}, "tool", False),
    (
        "execute_tool final_result",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "final_result",
            "logfire.msg": "running output function: final_result",
        },
        "tool",
        False,
    ),
    (
        "x",
        {"gen_ai.operation.name": "execute_tool", "pydantic_ai.tool.failure_stage": "validation"},
        "tool",
        False,
    ),
    ("handoff to billing", {"openinference.span.kind": "TOOL"}, "tool", False),
    ("x", {"langfuse.observation.type": "generation"}, "llm", True),
    ("x", {"openinference.span.kind": "llm"}, "llm", True),
    ("x", {"langsmith.span.kind": "llm"}, "llm", True),
    ("x", {"langsmith.span.kind": "chain", "gen_ai.operation.name": "chat"}, "other", True),
    ("x", {"gen_ai.operation.name": "chat"}, "llm", True),
    ("x", {"gen_ai.operation.name": "generate_content"}, "llm", True),
    ("x", {"llm.request.type": "completion"}, "llm", True),
    ("x", {"ai.operationId": "ai.generateText.doGenerate"}, "llm", True),
    ("x", {"ai.operationId": "ai.streamText.doStream"}, "llm", True),
    ("x", {"gen_ai.request.model": "m", "gen_ai.usage.input_tokens": "12"}, "llm", True),
    ("x", {"llm.model_name": "m", "llm.token_count.prompt": 3}, "llm", True),
    (
        "x",
        {"llm.model_name": "m", "llm.token_count.prompt": 3, "openinference.span.kind": "CHAIN"},
        "other",
        True,
    ),
    ("x", {"openinference.span.kind": "AGENT"}, "agent", True),
    ("x", {"gen_ai.operation.name": "invoke_agent"}, "agent", True),
    ("x", {"gen_ai.operation.name": "invoke_workflow"}, "agent", True),
    ("x", {"traceloop.span.kind": "workflow"}, "agent", True),
    ("x", {"langfuse.observation.type": "agent"}, "agent", True),
    ("agent run", {}, "agent", True),
    (
        "x",
        {
            "ai.operationId": "ai.generateText",
            "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 5,
        },
        "agent",
        True,
    ),
    ("SELECT 1", {"db.system": "postgresql"}, "other", True),
]


@pytest.mark.parametrize(
    ("name", "attrs", "role", "counted"), CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)]
)
def test_classification(name: str, attrs: dict[str, Any], role: str, counted: bool) -> None:
    verdict = builtin_set().recognizer.recognise(name, 1, 0, "", attrs, {})
    assert verdict.role == role, verdict
    assert verdict.counted is counted
    assert verdict.convention if role != "other" else verdict.label

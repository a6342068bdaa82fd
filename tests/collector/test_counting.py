"""What counts as a tool step or an LLM call when frameworks add spans that
are neither (docs/runs.md "Not a step", "LLM calls that are no call"): one
test per rule, each built the way the framework that showed it emits it."""

from __future__ import annotations

from typing import Any

import pytest

from collector.assembly.runs import Run
from tests.collector.trees import Tree, genai_agent

TOOL = "execute_tool"


def tool(name: str, call: str | None = None, **extra: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.operation.name": TOOL, "gen_ai.tool.name": name, **extra}
    if call is not None:
        attrs["gen_ai.tool.call.id"] = call
    return attrs


def agent(name: str) -> dict[str, Any]:
    return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}


def reasons(t: Tree, run: Run) -> dict[str, str]:
    names = {s.span_id: s.name for s in t.spans}
    return {names[i]: v.reason for i, v in run.verdicts.items() if v.reason}


def test_a_merged_span_beside_parallel_calls_is_not_another_step() -> None:
    """google-adk emits one execute_tool span per call of a response plus an
    `execute_tool (merged)` span named `(merged tools)` for all of them."""
    t = Tree()
    root = t.add("badge.run")
    a = genai_agent(t, root)
    t.add("execute_tool weather", tool("weather", "adk-1"), parent=a)
    t.add("execute_tool time", tool("time", "adk-2"), parent=a)
    t.add("execute_tool (merged)", tool("(merged tools)", "e-9"), parent=a)
    run = t.run()
    assert run.steps == 2
    assert reasons(t, run)["execute_tool (merged)"] == "not a step: google-adk:not_a_step[0]"


@pytest.mark.parametrize(
    ("tool_name", "why"),
    [
        ("transfer_to_agent", "google-adk:not_a_step[1]"),  # google-adk's built-in
        ("handoff", "llamaindex:not_a_step[0]"),  # llama-index's reserved tool
    ],
)
def test_a_frameworks_own_handoff_tool_is_not_a_step(tool_name: str, why: str) -> None:
    t = Tree()
    root = t.add("badge.run")
    a = genai_agent(t, root)
    t.add(f"execute_tool {tool_name}", tool(tool_name), parent=a)
    t.add("execute_tool lookup", tool("lookup"), parent=a)
    run = t.run()
    assert run.steps == 1
    assert why in reasons(t, run)[f"execute_tool {tool_name}"]


@pytest.mark.parametrize(
    "tool_name",
    ["transfer_to_billing", "Handoff-transfer_to_BillingAgent", "transfer_back_to_billing"],
)
def test_a_tool_named_for_an_agent_of_the_trace_is_a_handoff(tool_name: str) -> None:
    """AutoGen Swarm, LangGraph swarm/supervisor, OpenAI Swarm and Semantic
    Kernel (`Plugin-function`) name handoff tools `transfer_to_<agent>`."""
    t = Tree()
    root = t.add("badge.run")
    triage = t.add("invoke_agent triage", agent("triage"), parent=root)
    t.add(f"execute_tool {tool_name}", tool(tool_name), parent=triage)
    billing_name = "BillingAgent" if "Agent" in tool_name else "billing"
    billing = t.add(f"invoke_agent {billing_name}", agent(billing_name), parent=root)
    t.add("execute_tool refund", tool("refund"), parent=billing)
    run = t.run()
    assert run.steps == 1
    assert "a handoff to agent" in reasons(t, run)[f"execute_tool {tool_name}"]


def test_a_transfer_tool_that_names_no_agent_of_the_trace_is_a_step() -> None:
    """A banking agent's `transfer_to_savings` moves money, not control."""
    t = Tree()
    root = t.add("badge.run")
    a = t.add("invoke_agent bank", agent("bank"), parent=root)
    t.add("execute_tool transfer_to_savings", tool("transfer_to_savings"), parent=a)
    assert t.run().steps == 1


def test_an_agent_span_named_by_the_genai_span_name_counts_as_a_handoff_target() -> None:
    t = Tree()
    root = t.add("badge.run")
    triage = t.add("invoke_agent triage", {"gen_ai.operation.name": "invoke_agent"}, parent=root)
    t.add("execute_tool transfer_to_refunds", tool("transfer_to_refunds"), parent=triage)
    t.add("invoke_agent Refunds", {"gen_ai.operation.name": "invoke_agent"}, parent=root)
    assert t.run().steps == 0


def test_a_tool_whose_type_says_transfer_is_a_handoff() -> None:
    t = Tree()
    root = t.add("badge.run")
    a = genai_agent(t, root)
    t.add(
        "execute_tool route", tool("route", **{"gen_ai.tool.type": "TransferToAgentTool"}), parent=a
    )
    assert t.run().steps == 0


@pytest.mark.parametrize(
    "tool_name",
    ["final_answer", "final_result", "set_model_response", "exit_loop", "Handoff-complete_task"],
)
def test_tools_that_only_hand_back_the_answer_or_end_the_loop_are_not_steps(tool_name: str) -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add(
        "FinalAnswerTool", {"openinference.span.kind": "TOOL", "tool.name": tool_name}, parent=root
    )
    t.add("SimpleTool", {"openinference.span.kind": "TOOL", "tool.name": "search"}, parent=root)
    run = t.run()
    assert run.steps == 1
    names = {s.span_id: s.facts.get("tool") for s in t.spans}
    why = next(v.reason for i, v in run.verdicts.items() if names[i] == tool_name)
    assert why.startswith("not a step: ") and ":not_a_step[" in why


def test_an_agent_used_as_a_tool_is_one_step_plus_its_agents_own_steps() -> None:
    t = Tree()
    root = t.add("badge.run")
    outer = t.add("invoke_agent orchestrator", agent("orchestrator"), parent=root)
    as_tool = t.add("execute_tool researcher", tool("researcher", "call-1"), parent=outer)
    inner = t.add("invoke_agent researcher", agent("researcher"), parent=as_tool)
    t.add("execute_tool search", tool("search", "call-1"), parent=inner)  # ids per agent
    t.add("execute_tool search", tool("search", "call-2"), parent=inner)
    assert t.run().steps == 3


def test_a_reused_call_id_marks_a_duplicate_only_for_the_same_tool() -> None:
    """A nested agent's call ids may repeat the outer agent's (`tu-0-0` in both)."""
    t = Tree()
    root = t.add("badge.run")
    a = genai_agent(t, root)
    outer = t.add("execute_tool plan_trip", tool("plan_trip", "tu-0-0"), parent=a)
    t.add("execute_tool book_hotel", tool("book_hotel", "tu-0-0"), parent=outer)
    twin = t.add("execute_tool plan_trip", tool("plan_trip", "tu-0-0"), parent=outer)
    run = t.run()
    assert run.steps == 2
    assert run.verdicts[twin].reason.startswith("nested duplicate")


def test_the_same_tool_under_itself_with_another_call_id_is_a_second_call() -> None:
    t = Tree()
    root = t.add("badge.run")
    a = genai_agent(t, root)
    outer = t.add("execute_tool search", tool("search", "1"), parent=a)
    t.add("execute_tool search", tool("search", "2"), parent=outer)
    assert t.run().steps == 2


def test_operations_that_are_no_tool_step_never_count_whatever_marks_them() -> None:
    t = Tree()
    root = t.add("badge.run")
    for operation in ("plan", "search_memory", "update_memory", "create_agent"):
        t.add(
            operation,
            {"openinference.span.kind": "TOOL", "gen_ai.operation.name": operation},
            parent=root,
        )
    t.add("workflow", {"gen_ai.operation.name": "invoke_workflow"}, parent=root)
    run = t.run()
    assert run.steps == 0
    assert reasons(t, run)["plan"] == "not a step: genai:not_a_step[0]"


def test_a_handoff_operation_marked_as_a_tool_is_not_a_step() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add(
        "handoff",
        {"openinference.span.kind": "TOOL", "gen_ai.operation.name": "handoff"},
        parent=root,
    )
    assert t.run().steps == 0


PREPARE = {
    "openinference.span.kind": "LLM",
    "llm.model_name": "m",
    "llm.invocation_parameters": "{}",
}
CALL = {
    "openinference.span.kind": "LLM",
    "llm.model_name": "m",
    "llm.input_messages": True,  # what the proto marker lifts
    "llm.token_count.prompt": 10,
    "llm.token_count.completion": 2,
}


def test_an_llm_span_that_says_nothing_beside_a_real_call_prepares_it() -> None:
    """OpenInference marks every span of a llama-index LLM object LLM, its
    `_prepare_chat_with_tools` (model name and parameters only) included."""
    t = Tree()
    root = t.add("badge.run")
    step = t.add("run_agent_step", {"openinference.span.kind": "CHAIN"}, parent=root)
    t.add("ScriptedLLM._prepare_chat_with_tools", PREPARE, parent=step)
    t.add("ScriptedLLM.astream_chat", CALL, parent=step)
    run = t.run()
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (1, 10, 2)
    assert "the request being prepared" in reasons(t, run)["ScriptedLLM._prepare_chat_with_tools"]


def test_an_llm_span_that_says_nothing_alone_still_counts() -> None:
    """Content capture off and no usage reported: the only evidence of a call."""
    t = Tree()
    root = t.add("badge.run")
    t.add("chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}, parent=root)
    assert t.run().llm_calls == 1


def test_a_failed_call_that_says_nothing_beside_its_retry_counts_both() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add(
        "chat m",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
        parent=root,
        status=2,
    )
    t.add(
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 4,
        },
        parent=root,
    )
    assert t.run().llm_calls == 2


def test_two_empty_spans_of_different_models_are_two_calls() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add("embed", {**PREPARE, "llm.model_name": "other"}, parent=root)
    t.add("call", CALL, parent=root)
    assert t.run().llm_calls == 2


def test_a_reported_cost_under_the_proposed_cost_attribute_is_read() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add(
        "chat m",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 5,
            "gen_ai.usage.cost.amount": 0.25,
        },
        parent=root,
    )
    run = t.run()
    assert (run.cost_usd, run.cost_source) == (0.25, "reported")


# Pydantic Logfire's OpenAI client, a streamed call: the request span (what
# was sent, no usage, no output), then a sibling log with usage and output.
STREAM_REQUEST = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": "m",
    "gen_ai.input.messages": True,
}
STREAM_ANSWER = {
    **STREAM_REQUEST,
    "gen_ai.output.messages": '[{"role": "assistant", "parts": []}]',
    "gen_ai.usage.input_tokens": 30,
    "gen_ai.usage.output_tokens": 7,
}


def test_a_request_whose_answer_a_sibling_reports_is_one_call() -> None:
    t = Tree()
    root = t.add("badge.run")
    for turn in range(3):
        start = turn * 10_000_000
        t.add("Chat Completion with 'm'", STREAM_REQUEST, parent=root, start=start)
        t.add("streaming response", STREAM_ANSWER, parent=root, start=start + 5_000_000)
    run = t.run()
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (3, 90, 21)
    why = [v.reason for v in run.verdicts.values() if v.role == "llm" and not v.counted]
    assert len(why) == 3 and all("reported apart" in w for w in why)


def test_concurrent_streamed_requests_each_pair_with_one_answer() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add("request 1", STREAM_REQUEST, parent=root, start=0)
    t.add("request 2", STREAM_REQUEST, parent=root, start=1)
    t.add("answer 1", STREAM_ANSWER, parent=root, start=5)
    t.add("answer 2", STREAM_ANSWER, parent=root, start=6)
    assert t.run().llm_calls == 2


def test_a_failed_request_with_no_answer_counts_and_pairs_with_nothing() -> None:
    """A streamed call that failed at the request has only its request span;
    the next call's answer is not its answer."""
    t = Tree()
    root = t.add("badge.run")
    t.add("request", STREAM_REQUEST, parent=root, start=0, status=2)
    t.add("non-streamed call", STREAM_ANSWER, parent=root, start=10)
    assert t.run().llm_calls == 2


def test_an_answer_before_the_request_or_of_another_model_is_not_its_answer() -> None:
    t = Tree()
    root = t.add("badge.run")
    t.add("call", STREAM_ANSWER, parent=root, start=0)
    t.add("request", STREAM_REQUEST, parent=root, start=10)
    t.add("other model", {**STREAM_ANSWER, "gen_ai.request.model": "n"}, parent=root, start=20)
    assert t.run().llm_calls == 3


def test_a_call_that_used_tokens_and_reports_a_cost_of_zero_was_not_priced() -> None:
    """OpenLIT writes gen_ai.usage.cost = 0 for a model its table lacks: the
    call is estimated from its tokens, not free."""
    t = Tree()
    root = t.add("badge.run")
    priced = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1_000_000}
    t.add("chat m", {**priced, "gen_ai.usage.cost": 0}, parent=root)
    run = t.run()
    assert (run.cost_usd, run.cost_source) == (5.0, "estimated")


def test_a_cost_of_zero_on_a_call_without_tokens_is_a_reported_zero() -> None:
    """A failed call Langfuse prices at 0 used nothing: its cost is 0."""
    t = Tree()
    root = t.add("badge.run")
    failed = {"gen_ai.operation.name": "chat", "gen_ai.usage.cost": 0}
    t.add("chat m", failed, parent=root, status=2)
    run = t.run()
    assert (run.cost_usd, run.cost_source) == (0.0, "reported")

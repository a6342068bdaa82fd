"""docs/runs.md "The fields of a run" and exclusion rules, on hand-built span trees."""

from __future__ import annotations

import uuid

import pytest

from collector.assembly.membership import (
    FLAG_HAS_IS_REMOTE,
    FLAG_IS_REMOTE,
    RUN_NAMESPACE,
    run_id_for,
)
from collector.assembly.runs import Timers
from tests.collector.trees import EPOCH_S, Tree, genai_agent


def test_genai_run_counts_tools_llm_calls_tokens_and_estimates_cost() -> None:
    t = Tree()
    root = t.add(
        "badge.run", {"badge.task.id": "t1", "badge.run.success": "true"}, start=0, end=2_500_000
    )
    agent = genai_agent(t, root)
    t.add(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 100,
            "gen_ai.usage.output_tokens": 10,
        },
        parent=agent,
    )
    t.add(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.prompt_tokens": "50",
            "gen_ai.usage.completion_tokens": 5,
        },
        parent=agent,
    )
    t.add(
        "tool",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "a"},
        parent=agent,
        status=2,
    )
    run = t.run()
    assert (run.status, run.success, run.success_source, run.task_id) == (
        "completed",
        True,
        "reported",
        "t1",
    )
    assert (run.steps, run.llm_calls, run.tool_errors) == (1, 2, 1)
    assert (run.input_tokens, run.output_tokens) == (150, 15)
    assert run.cost_usd == pytest.approx((150 * 5 + 15 * 15) / 1e6)
    assert run.cost_source == "estimated"
    assert run.latency_ms == 2.5


def test_root_alone_has_null_steps_and_status_outcome() -> None:
    t = Tree()
    t.add("GET /", {}, status=2, exception="ValueError")
    run = t.run()
    assert run.steps is None
    assert (run.success, run.success_source, run.error_class) == (False, "status", "ValueError")
    assert run.cost_usd is None and run.cost_source is None


def test_llm_only_run_has_zero_steps() -> None:
    t = Tree()
    root = t.add("root")
    t.add("chat", {"gen_ai.operation.name": "chat"}, parent=root)
    assert t.run().steps == 0


def test_error_root_is_a_completed_failure_with_error_type() -> None:
    t = Tree()
    t.add("root", {"error.type": "MaxTurns"}, status=2)
    run = t.run()
    assert (run.status, run.success, run.error_class) == ("completed", False, "MaxTurns")


def test_reported_cost_on_root_wins_and_is_not_priced() -> None:
    t = Tree()
    root = t.add("root", {"badge.cost.usd": 0.5})
    t.add(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.cost": 0.1,
        },
        parent=root,
    )
    assert (t.run().cost_usd, t.run().cost_source) == (0.5, "reported")


def test_negative_counts_and_costs_are_no_figures_and_are_named() -> None:
    """Issue 37 item 12: -1e9 on the root and -5e11 on a call scored as a refund."""
    t = Tree()
    root = t.add("root", {"badge.cost.usd": -1e9})
    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.cost": "-5e11",
        "gen_ai.usage.input_tokens": -(9 * 10**18),
        "gen_ai.usage.output_tokens": 3,
    }
    t.add("chat", chat, parent=root)
    run = t.run()
    assert (run.input_tokens, run.output_tokens) == (None, 3)
    assert (run.cost_usd, run.cost_source) == pytest.approx((3 * 15 / 1e6, "estimated"))
    root_facts, chat_facts = (span.facts for span in t.spans)
    assert root_facts["ign"] == {"badge.cost.usd": "negative"}
    assert chat_facts["ign"] == {
        "gen_ai.usage.cost": "negative",
        "gen_ai.usage.input_tokens": "negative",
    }


def test_a_run_cost_stops_at_the_ceiling_however_it_was_found() -> None:
    """Any finite cost >= 0 is a cost; a run's (and so a sum over runs) never
    passes $10^12, nor overflows when many calls report 1e308."""
    t = Tree()
    root = t.add("root", {"badge.cost.usd": 1e308})
    assert (t.run().cost_usd, t.run().cost_source) == (1e12, "reported")
    t = Tree()
    root = t.add("root")
    for _ in range(3):
        t.add("chat", {"gen_ai.operation.name": "chat", "gen_ai.usage.cost": 1e308}, parent=root)
    t.add(
        "chat",
        {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 2**63 - 1},
        parent=root,
    )
    assert (t.run().cost_usd, t.run().cost_source) == (1e12, "mixed")
    assert t.run().input_tokens == 2**63 - 1
    t = Tree()
    root = t.add("root")
    t.add("chat", {"gen_ai.operation.name": "chat", "gen_ai.usage.cost": 0.25}, parent=root)
    t.add("chat", {"gen_ai.operation.name": "chat", "gen_ai.usage.cost": -0.0}, parent=root)
    assert (t.run().cost_usd, t.run().cost_source) == (0.25, "reported")


def test_mixed_cost_when_some_llm_calls_report() -> None:
    t = Tree()
    root = t.add("root")
    t.add("chat", {"gen_ai.operation.name": "chat", "llm.cost.total": 0.01}, parent=root)
    t.add("chat", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 1000}, parent=root)
    run = t.run()
    assert run.cost_source == "mixed"
    assert run.cost_usd == pytest.approx(0.01 + 1000 * 5 / 1e6)


def test_nested_mcp_span_under_execute_tool_counts_once() -> None:
    t = Tree()
    root = t.add("root")
    outer = t.add(
        "execute_tool search",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
        parent=root,
    )
    client = t.add("mcp client", {}, parent=outer)
    t.add(
        "tools/call search",
        {"mcp.method.name": "tools/call", "gen_ai.tool.name": "search"},
        parent=client,
    )
    run = t.run()
    assert run.steps == 1
    inner = [v for v in run.verdicts.values() if v.reason.startswith("nested duplicate")]
    assert len(inner) == 1


def test_a_tool_calling_a_different_tool_counts_both() -> None:
    t = Tree()
    root = t.add("root")
    outer = t.add(
        "a",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "a",
            "gen_ai.tool.call.id": "1",
        },
        parent=root,
    )
    t.add(
        "b",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "b",
            "gen_ai.tool.call.id": "2",
        },
        parent=outer,
    )
    assert t.run().steps == 2


def test_output_tool_and_validation_failure_are_not_steps() -> None:
    t = Tree()
    root = t.add("agent run")
    t.add(
        "running tool: add",
        {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add"},
        parent=root,
    )
    t.add(
        "execute_tool final_result",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "final_result",
            "logfire.msg": "running output function: final_result",
        },
        parent=root,
    )
    t.add(
        "execute_tool add",
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "add",
            "pydantic_ai.tool.failure_stage": "validation",
        },
        parent=root,
    )
    run = t.run()
    assert (run.steps, run.tool_errors) == (1, 1)


def test_handoff_is_not_a_step() -> None:
    t = Tree()
    root = t.add("root")
    t.add("handoff to refunds", {"openinference.span.kind": "TOOL"}, parent=root)
    t.add("lookup", {"openinference.span.kind": "TOOL", "tool.name": "lookup"}, parent=root)
    assert t.run().steps == 1


def test_double_instrumented_llm_call_counts_once_with_outer_then_inner_tokens() -> None:
    t = Tree()
    root = t.add("root")
    outer = t.add("ChatModel", {"openinference.span.kind": "LLM"}, parent=root)
    t.add(
        "openai.chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 7,
            "gen_ai.usage.output_tokens": 3,
        },
        parent=outer,
    )
    run = t.run()
    assert (run.llm_calls, run.input_tokens, run.output_tokens) == (1, 7, 3)


def test_agent_aggregate_usage_is_used_only_without_llm_usage_and_never_summed() -> None:
    t = Tree()
    root = t.add("root")
    outer = t.add(
        "invoke_agent a",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.aggregated_usage.input_tokens": 300,
            "gen_ai.aggregated_usage.output_tokens": 30,
        },
        parent=root,
    )
    inner = t.add(
        "invoke_agent b",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.aggregated_usage.input_tokens": 100,
            "gen_ai.aggregated_usage.output_tokens": 10,
        },
        parent=outer,
    )
    t.add("chat", {"gen_ai.operation.name": "chat"}, parent=inner)
    run = t.run()
    assert (run.input_tokens, run.output_tokens, run.llm_calls) == (300, 30, 1)
    t.add(
        "chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 40,
            "gen_ai.usage.output_tokens": 4,
        },
        parent=inner,
    )
    assert (t.run().input_tokens, t.run().output_tokens) == (40, 4)


def test_badge_run_id_splits_one_trace_into_runs() -> None:
    t = Tree()
    root = t.add("suite", {"badge.task.id": "suite"})
    a = t.add("case a", {"badge.run.id": "A", "badge.task.id": "ta"}, parent=root)
    t.add("tool", {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x"}, parent=a)
    b = t.add("case b", {"badge.run.id": "B", "badge.task.id": "tb"}, parent=root)
    t.add("chat", {"gen_ai.operation.name": "chat"}, parent=b)
    runs = {r.run_key: r for r in t.runs()}
    assert set(runs) == {"trace:" + "ab" * 16, "run:A", "run:B"}
    assert (runs["run:A"].steps, runs["run:A"].task_id, runs["run:A"].span_count) == (1, "ta", 2)
    assert (runs["run:B"].llm_calls, runs["run:B"].status) == (1, "completed")
    assert runs["run:A"].root_span_id == a  # parent stored in the enclosing run


def test_a_run_id_claims_descendants_of_other_services_and_its_agent_owns_the_run() -> None:
    """A screened agent's backend, another service.name, belongs to the screened run."""
    t = Tree()
    root = t.add("badge.run", {"badge.run.id": "s/t1/1", "badge.task.id": "t1"}, agent="bot")
    server = t.add("POST /run", parent=root, agent="backend")
    t.add(
        "execute_tool x", {"gen_ai.operation.name": "execute_tool"}, parent=server, agent="backend"
    )
    other = t.add("elsewhere", {"gen_ai.operation.name": "chat"}, agent="backend")
    runs = {(r.agent_id, r.run_key): r for r in t.runs()}
    assert set(runs) == {("bot", "run:s/t1/1"), ("backend", "trace:" + "ab" * 16)}
    screened = runs[("bot", "run:s/t1/1")]
    assert (screened.steps, screened.span_count, screened.root_span_id) == (1, 3, root)
    assert runs[("backend", "trace:" + "ab" * 16)].verdicts.keys() == {other}


def test_remote_parent_root_is_root_at_once() -> None:
    t = Tree()
    t.add(
        "server span",
        {"badge.task.id": "r"},
        parent="ffffffffffffffff",
        flags=FLAG_HAS_IS_REMOTE | FLAG_IS_REMOTE,
    )
    assert t.run().status == "completed"


def test_local_parent_missing_keeps_running_until_timeout() -> None:
    t = Tree()
    t.add("child", {}, parent="ffffffffffffffff", flags=FLAG_HAS_IS_REMOTE, received_at=100)
    timers = Timers(orphan_grace_s=30, run_timeout_s=300)
    running = t.run(now=150, timers=timers)
    assert (running.status, running.success, running.check_at) == ("running", None, EPOCH_S + 400)
    timed_out = t.run(now=400, timers=timers)
    assert (timed_out.status, timed_out.success, timed_out.error_class) == (
        "timeout",
        False,
        "timeout",
    )


def test_unknown_flags_orphan_becomes_root_after_grace() -> None:
    t = Tree()
    t.add("child", {"badge.run.success": False}, parent="ffffffffffffffff", received_at=100)
    timers = Timers(orphan_grace_s=30, run_timeout_s=300)
    assert t.run(now=110, timers=timers).status == "running"
    assert t.run(now=110, timers=timers).check_at == EPOCH_S + 130
    promoted = t.run(now=130, timers=timers)
    assert (promoted.status, promoted.success) == ("completed", False)


@pytest.mark.parametrize("cycle", ["own parent", "each other's parent"])
def test_spans_whose_parents_form_a_cycle_complete_after_the_grace_like_an_orphan(
    cycle: str,
) -> None:
    # found by bench/fuzz.py: with no span outside the cycle, no top was found
    t = Tree()
    first = f"{1:016x}"
    t.add("a", {"badge.task.id": "loop"}, parent=first if cycle == "own parent" else f"{2:016x}")
    t.add("b", {}, parent=first, start=5)
    timers = Timers(orphan_grace_s=30, run_timeout_s=300)
    waiting = t.run(now=110, timers=timers)
    assert (waiting.status, waiting.check_at) == ("running", EPOCH_S + 130)
    promoted = t.run(now=130, timers=timers)
    assert (promoted.status, promoted.root_span_id, promoted.task_id) == (
        "completed",
        first,
        "loop",
    )


def test_llm_calls_whose_parents_form_a_cycle_do_not_hang_assembly() -> None:
    # each one's nearest LLM ancestor is the other: the walk to the outermost
    # call looped forever, and the batch writer with it
    t = Tree()
    t.add("root", {"badge.task.id": "x"})
    t.add("chat a", {"gen_ai.operation.name": "chat"}, parent=f"{3:016x}")
    t.add("chat b", {"gen_ai.operation.name": "chat"}, parent=f"{2:016x}")
    t.add("chat c", {"gen_ai.operation.name": "chat"}, parent=f"{3:016x}")
    run = t.run(now=1000)
    assert (run.status, run.llm_calls) == ("completed", 0)  # no outermost call in a cycle


def test_run_status_override_only_from_grader_keys() -> None:
    agent = Tree()
    agent.add("root", {"badge.run.status": "failed"})
    assert agent.run().status == "completed"
    grader = Tree()
    grader.add("root", {"badge.run.status": "failed"}, grader=True)
    assert grader.run().status == "failed"


def test_success_sources_in_order() -> None:
    t = Tree()
    root = t.add("root", {"gen_ai.evaluation.score.label": "fail"})
    assert (t.run().success, t.run().success_source) == (False, "reported")
    t.add("x", {"gen_ai.task.status": "success"}, parent=root)
    assert t.run().success is True
    t.add("y", {"badge.run.success": False}, parent=root)
    assert t.run().success is False


def test_task_id_falls_back_to_resource() -> None:
    t = Tree()
    t.add("root", {}, resource={"gen_ai.task.id": "from-resource"})
    assert t.run().task_id == "from-resource"


def test_each_agent_in_a_trace_gets_its_own_run() -> None:
    t = Tree()
    root = t.add("client", {"badge.task.id": "t"}, agent="agent-1")
    t.add("server", {"mcp.method.name": "tools/call"}, parent=root, agent="mcp-server")
    runs = {r.agent_id: r for r in t.runs()}
    assert set(runs) == {"agent-1", "mcp-server"}
    assert runs["mcp-server"].status == "completed"  # parent stored in another run


def test_an_agent_root_alone_shows_no_internals() -> None:
    t = Tree()
    t.add("invoke_agent a", {"gen_ai.operation.name": "invoke_agent"})
    assert t.run().steps is None
    t.add("chat", {"gen_ai.operation.name": "chat"}, parent=t.spans[0].span_id)
    assert t.run().steps == 0


@pytest.mark.parametrize(
    ("agent", "key"),
    [("a1", "trace:0af7651916cd43dd8448eb211c80319c"), ("agent-é", "run:r/ü"), ("", "")],
)
def test_run_ids_are_the_uuid5_of_agent_and_key(agent: str, key: str) -> None:
    """run_id_for skips the UUID object; the ids must stay exactly uuid5's."""
    assert run_id_for(agent, key) == str(uuid.uuid5(RUN_NAMESPACE, f"{agent}\x00{key}"))


def version_tree(
    root_attrs: dict[str, object], agent_attrs: list[dict[str, object]], resource: dict[str, object]
) -> Tree:
    t = Tree()
    root = t.add("badge.run", root_attrs, start=0, resource=resource)
    for i, attrs in enumerate(agent_attrs):  # later agents start later
        t.add(
            "invoke_agent a",
            {"gen_ai.operation.name": "invoke_agent", **attrs},
            parent=root,
            start=10 + i,
        )
    return t


@pytest.mark.parametrize(
    ("root_attrs", "agent_attrs", "resource", "expected"),
    [
        ({"badge.agent.version": "b1", "gen_ai.agent.version": "g1"}, [], {}, "b1"),
        ({"gen_ai.agent.version": "g1"}, [{"gen_ai.agent.version": "a1"}], {}, "g1"),
        ({}, [{"gen_ai.agent.version": "a1"}, {"gen_ai.agent.version": "a2"}], {}, "a1"),
        ({}, [{}, {"gen_ai.agent.version": "a2"}], {"service.version": "s1"}, "s1"),
        ({}, [], {"service.version": "s1"}, "s1"),
        ({"badge.agent.version": 7}, [], {"service.version": "s1"}, "7"),
        ({}, [], {}, None),
    ],
    ids=[
        "root-badge",
        "root-genai",
        "outermost-agent",
        "outermost-has-none",
        "resource",
        "number",
        "none",
    ],
)
def test_version_is_the_first_found_of_root_agent_span_resource(
    root_attrs: dict[str, object],
    agent_attrs: list[dict[str, object]],
    resource: dict[str, object],
    expected: str | None,
) -> None:
    assert version_tree(root_attrs, agent_attrs, resource).run().version == expected


def test_version_is_null_while_the_root_is_missing() -> None:
    t = Tree()
    t.add(
        "invoke_agent a",
        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.version": "x"},
        parent="ff" * 8,
        flags=0x100,
    )
    assert t.run().version is None

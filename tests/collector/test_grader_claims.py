"""docs/runs.md "Runs a grader recorded", inside one trace: a run a grader
key's span claims has a grader's span as its root, and other keys' spans
count in it only under a grader's span (issue 37 item 2)."""

from __future__ import annotations

from collector.assembly.membership import (
    FLAG_HAS_IS_REMOTE,
    FLAG_IS_REMOTE,
    aside_key,
    run_id_for,
)
from collector.storage.trace_spans import stored_as
from tests.collector.trees import TRACE, Tree

CHAT = {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100}
SCREENED = {
    "badge.run.id": "s/t/1",
    "badge.task.id": "t",
    "badge.screening.id": "s",
    "badge.screening.round": 1,
}


def test_an_earlier_parentless_span_of_another_key_goes_aside_and_the_graders_span_is_root() -> (
    None
):
    t = Tree()
    root = t.add(
        "badge.run", {**SCREENED, "badge.run.success": False}, start=0, end=100_000_000, grader=True
    )
    t.add("chat", CHAT, parent=root)  # the agent's work, under the root it was handed
    forged = t.add(
        "badge.run",
        {**SCREENED, "badge.run.success": True},
        start=-50_000_000_000,
        end=1_000_000,
    )
    t.add("chat", CHAT, parent=forged)
    runs = {r.run_key: r for r in t.runs()}
    assert set(runs) == {"run:s/t/1", aside_key(TRACE, "run:s/t/1")}
    held = runs["run:s/t/1"]
    assert (held.root_span_id, held.success, held.success_source) == (root, False, "graded")
    assert (held.latency_ms, held.llm_calls, held.span_count) == (100.0, 1, 2)
    assert (held.grader_claim, held.screening_id) == (True, "s")
    aside = runs[aside_key(TRACE, "run:s/t/1")]
    assert (aside.root_span_id, aside.grader_claim, aside.success_source) == (
        forged,
        False,
        "reported",
    )


def test_a_span_of_another_key_under_the_graders_span_is_never_the_root() -> None:
    """Not by starting earlier, nor by naming the run key: a descendant stays
    a descendant, and counts."""
    t = Tree()
    root = t.add("badge.run", SCREENED, start=0, end=10_000_000, grader=True)
    t.add("server", {"badge.run.id": "s/t/1"}, parent=root, start=-9_000_000_000)
    run = t.run()
    assert (run.root_span_id, run.span_count, run.latency_ms) == (root, 2, 10.0)


def test_a_parentless_span_of_another_key_cannot_take_a_graders_trace_run() -> None:
    t = Tree()
    root = t.add("harness", {"badge.run.success": False}, start=0, grader=True)
    forged = t.add("agent", {"badge.run.success": True}, start=-1_000_000_000)
    runs = {r.run_key: r for r in t.runs()}
    held = runs["trace:" + TRACE]
    assert (held.root_span_id, held.success, held.success_source) == (root, False, "graded")
    assert runs[aside_key(TRACE, "trace:" + TRACE)].root_span_id == forged


def test_a_graders_span_whose_parent_is_remote_claims_a_trace_run() -> None:
    t = Tree()
    remote = FLAG_HAS_IS_REMOTE | FLAG_IS_REMOTE
    root = t.add("harness", {}, parent="ffffffffffffffff", flags=remote, grader=True)
    t.add("ffff", {}, start=-1_000_000_000)  # parentless, earlier, another key
    held = next(r for r in t.runs() if r.run_key == "trace:" + TRACE)
    assert (held.root_span_id, held.grader_claim) == (root, True)


def test_a_graders_evaluation_inside_an_agents_run_claims_nothing() -> None:
    """docs/loop.md: a grader's span under the agent's root grades the run;
    the agent's root stays the root."""
    t = Tree()
    root = t.add("agent run", {"badge.task.id": "t"}, start=0)
    t.add("evaluation", {"badge.run.success": False}, parent=root, grader=True)
    run = t.run()
    assert (run.root_span_id, run.success, run.success_source) == (root, False, "graded")
    assert (run.grader_claim, run.span_count) == (False, 2)


def test_an_agents_own_run_key_is_its_run_as_before() -> None:
    t = Tree()
    root = t.add("badge.run", SCREENED, start=0)
    t.add("earlier", {"badge.run.id": "s/t/1"}, start=-1_000_000_000)
    run = t.run()
    assert (run.run_key, run.grader_claim, run.span_count) == ("run:s/t/1", False, 2)
    assert run.root_span_id != root  # no grader: the earliest parentless span, as RUNS.md says


def test_a_run_stored_aside_is_found_by_its_aside_id() -> None:
    t = Tree()
    t.add("badge.run", SCREENED, start=0)
    [run] = t.runs()
    aside = run_id_for(run.agent_id, aside_key(TRACE, "run:s/t/1"))
    assert stored_as([run], aside) is run and stored_as([run], run.id) is run
    assert stored_as([run], run_id_for(run.agent_id, "run:other")) is None


def test_a_span_of_another_key_whose_parent_has_not_arrived_stays_and_is_never_the_root() -> None:
    """The agent's span that copies the run key from `baggage`, its parent
    late or lost: it stays in the graded run, as in any run, as a detached
    branch, and the root is still the grader's."""
    t = Tree()
    root = t.add("badge.run", SCREENED, start=0, end=10_000_000, grader=True)
    t.add("chat", {**CHAT, "badge.run.id": "s/t/1"}, parent="0f" * 8, start=-1_000_000_000)
    run = t.run()
    assert (run.root_span_id, run.span_count, run.llm_calls, run.latency_ms) == (root, 2, 1, 10.0)


def test_a_span_naming_the_run_key_under_another_run_of_the_trace_goes_aside() -> None:
    """Its parent is stored in another run: it would be a root on its own."""
    t = Tree()
    root = t.add("badge.run", SCREENED, start=0, grader=True)
    own = t.add("agent's own", {}, agent="agent-2", start=-2_000_000_000)
    forged = t.add("forged", {"badge.run.id": "s/t/1"}, parent=own, start=-1_000_000_000)
    runs = {r.run_key: r for r in t.runs()}
    assert runs["run:s/t/1"].root_span_id == root and runs["run:s/t/1"].span_count == 1
    assert runs[aside_key(TRACE, "run:s/t/1")].root_span_id == forged


def test_a_remote_parented_span_naming_the_run_key_goes_aside() -> None:
    t = Tree()
    root = t.add("badge.run", SCREENED, start=0, grader=True)
    remote = FLAG_HAS_IS_REMOTE | FLAG_IS_REMOTE
    t.add("forged", {"badge.run.id": "s/t/1"}, parent="0e" * 8, flags=remote, start=-(10**9))
    runs = {r.run_key: r for r in t.runs()}
    assert runs["run:s/t/1"].root_span_id == root and runs["run:s/t/1"].span_count == 1
    assert aside_key(TRACE, "run:s/t/1") in runs

"""docs/loop.md "Graded outcomes": evaluation events, outcomes from grader
keys, and which run ids a grade's run key names."""

from __future__ import annotations

import pytest

from collector.assembly.identity import agent_id
from collector.assembly.membership import keyed_run_ids, run_id_for
from collector.assembly.runs import Evaluation, Timers
from proto import WireEvent
from tests.collector.trees import EPOCH_S, TRACE, Tree

EVAL = "gen_ai.evaluation.result"


def evaluation(label: object, at: int, score: object = None, why: str | None = None) -> WireEvent:
    attrs: dict[str, object] = {"gen_ai.evaluation.score.label": label}
    if score is not None:
        attrs["gen_ai.evaluation.score.value"] = score
    if why is not None:
        attrs["gen_ai.evaluation.explanation"] = why
    return WireEvent(EVAL, at, attrs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("label", "outcome"),
    [
        ("pass", True),
        ("PASSED", True),
        ("True", True),
        ("success", True),
        ("correct", True),
        ("fail", False),
        ("Failed", False),
        ("false", False),
        ("failure", False),
        ("INCORRECT", False),
    ],
)
def test_an_evaluation_event_on_the_root_decides_the_outcome(label: str, outcome: bool) -> None:
    t = Tree()
    t.add("root", {}, status=2 if outcome else 1, events=(evaluation(label, 5, 0.75, "why"),))
    run = t.run()
    assert (run.success, run.success_source) == (outcome, "reported")
    assert run.evaluation == Evaluation(0.75, "why", 5e-9)


def test_the_last_labelled_evaluation_event_by_time_wins_whatever_their_order() -> None:
    t = Tree()
    events = (
        evaluation("fail", 300, 0.1, "late"),
        evaluation("pass", 100, 0.9, "early"),
        evaluation("unsure", 900, 0.5),  # no pass/fail label: decides nothing
    )
    t.add("root", {}, events=events)
    run = t.run()
    assert run.success is False and run.evaluation == Evaluation(0.1, "late", 300e-9)


def test_an_unknown_label_leaves_the_outcome_to_the_root_status() -> None:
    t = Tree()
    t.add("root", {}, status=2, events=(evaluation("maybe", 7, "0.4"),))
    run = t.run()
    assert (run.success, run.success_source) == (False, "status")
    assert run.evaluation == Evaluation(0.4, None, 7e-9)  # the score is still shown


def test_evaluation_ranks_after_reported_success_and_task_status() -> None:
    t = Tree()
    root = t.add("root", {}, events=(evaluation("fail", 1),))
    assert t.run().success is False
    t.add("x", {"gen_ai.task.status": "success"}, parent=root)
    assert t.run().success is True
    t2 = Tree()
    t2.add("root", {"badge.run.success": True}, events=(evaluation("fail", 1),))
    assert t2.run().success is True


def test_the_attribute_label_ranks_before_the_event_and_takes_the_same_words() -> None:
    t = Tree()
    t.add("root", {"gen_ai.evaluation.score.label": "Correct"}, events=(evaluation("fail", 1),))
    assert t.run().success is True


def test_an_evaluation_event_on_a_child_span_decides_nothing() -> None:
    t = Tree()
    root = t.add("root", {})
    t.add("judge", {}, parent=root, events=(evaluation("fail", 1),))
    run = t.run()
    assert (run.success, run.success_source, run.evaluation) == (True, "status", None)


def test_outcomes_from_grader_key_spans_are_graded_and_from_agent_keys_reported() -> None:
    for grader, source in ((True, "graded"), (False, "reported")):
        t = Tree()
        t.add("root", {"badge.run.success": False}, grader=grader, received_at=42.0)
        run = t.run()
        assert (run.success, run.success_source) == (False, source)
        assert run.evaluation == (Evaluation(None, None, EPOCH_S + 42.0) if grader else None)
        labelled = Tree()
        labelled.add("root", {}, grader=grader, events=(evaluation("pass", 9),))
        assert labelled.run().success_source == source


def test_a_grader_child_span_grades_an_agent_root() -> None:
    t = Tree()
    root = t.add("root", {})
    t.add("grader", {"badge.run.success": "false"}, parent=root, grader=True)
    assert (t.run().success, t.run().success_source) == (False, "graded")


def test_task_status_from_a_grader_key_stays_reported() -> None:
    t = Tree()
    t.add("root", {"gen_ai.task.status": "failure"}, grader=True)
    assert t.run().success_source == "reported"


def test_a_run_key_names_the_badge_run_id_and_a_trace_ids_run() -> None:
    ident = agent_id("owner-a", "bot")
    assert keyed_run_ids(ident, "case-7") == [run_id_for(ident, "run:case-7")]
    upper = TRACE.upper()
    assert keyed_run_ids(ident, upper) == [
        run_id_for(ident, f"run:{upper}"),
        run_id_for(ident, f"trace:{TRACE}"),
    ]
    t = Tree()
    t.add("root", {}, agent=ident)
    assert t.run().id == keyed_run_ids(ident, TRACE)[1]
    other = agent_id("owner-b", "bot")
    assert not set(keyed_run_ids(other, TRACE)) & set(keyed_run_ids(ident, TRACE))


def test_a_screened_timeout_sent_through_a_grader_key_is_graded_like_other_graded_runs() -> None:
    # SCREEN.md section 4 with LOOP.md section 4 (issue 42 item 3): the
    # screener records a timed-out dispatch with badge.run.status=timeout and
    # its grade badge.run.success=false on the root; through a grader key the
    # outcome is the grader's, so its source is `graded`, not `status`.
    t = Tree()
    t.add(
        "root",
        {"badge.run.status": "timeout", "badge.run.success": False, "error.type": "timeout"},
        grader=True,
    )
    run = t.run()
    assert (run.status, run.success, run.success_source) == ("timeout", False, "graded")
    assert run.error_class == "timeout"


def test_a_run_whose_root_never_came_times_out_on_status_even_with_a_graded_child() -> None:
    # RUNS.md "status": no root within run_timeout -> timeout, success false,
    # source `status`; what a child says cannot stand in for the missing root.
    t = Tree()
    t.add("child", {"badge.run.success": True}, parent="00000000000000aa", flags=0x100, grader=True)
    run = t.run(now=10_000.0, timers=Timers(orphan_grace_s=30, run_timeout_s=300))
    assert (run.status, run.success, run.success_source) == ("timeout", False, "status")

"""Impossible span times (docs/runs.md "Impossible times"): a bad clock on one
host neither poisons an agent's averages nor pins a run first in lists."""

from __future__ import annotations

from collector.assembly.clock import CLOCK_FLOOR_NS, clock_problem
from collector.assembly.runs import Timers
from tests.collector.trees import EPOCH_NS, EPOCH_S, Tree, genai_agent

DAY_NS = 86_400 * 10**9


def test_a_root_that_starts_at_zero_has_no_latency_and_the_collectors_times() -> None:
    t = Tree()
    root = t.add("badge.run", {"badge.task.id": "t"}, start=-EPOCH_NS, end=2_000_000)
    genai_agent(t, root)
    run = t.run()
    assert run.latency_ms is None
    assert run.started_ns == run.ended_ns == (EPOCH_S + 100) * 10**9  # when it was received
    assert run.status == "completed" and run.task_id == "t"
    assert "before 2000-01-01" in run.verdicts[root].clock


def test_a_root_dated_in_2262_is_set_aside_like_one_dated_1970() -> None:
    t = Tree()
    root = t.add("badge.run", start=0, end=240 * 365 * DAY_NS)
    run = t.run()
    assert run.latency_ms is None and run.ended_ns == (EPOCH_S + 100) * 10**9
    assert "more than a day after" in run.verdicts[root].clock


def test_a_root_up_to_a_day_ahead_of_the_collector_is_believed() -> None:
    """A host a few hours ahead is wrong, but its durations are still true."""
    t = Tree()
    t.add("badge.run", start=DAY_NS // 2, end=DAY_NS // 2 + 3_000_000)
    run = t.run()
    assert run.latency_ms == 3.0 and run.started_ns == EPOCH_NS + DAY_NS // 2


def test_a_run_longer_than_the_limit_keeps_its_times_but_has_no_latency() -> None:
    t = Tree()
    t.add("badge.run", start=0, end=2 * 3600 * 10**9)
    assert t.run(timers=Timers(max_latency_s=3600.0)).latency_ms is None
    assert t.run(timers=Timers(max_latency_s=3 * 3600.0)).latency_ms == 2 * 3600 * 1e3
    assert t.run(timers=Timers(max_latency_s=3600.0)).started_ns == EPOCH_NS


def test_without_a_root_only_the_possible_span_times_count() -> None:
    t = Tree()
    t.add("chat", {"gen_ai.operation.name": "chat"}, parent="f" * 16, start=0, end=5_000_000)
    bad = t.add("chat", {"gen_ai.operation.name": "chat"}, parent="f" * 16, start=-EPOCH_NS, end=1)
    run = t.run()
    assert (run.started_ns, run.ended_ns, run.latency_ms) == (EPOCH_NS, EPOCH_NS + 5_000_000, 5.0)
    assert run.llm_calls == 2  # the span still counts; only its times are set aside
    assert run.verdicts[bad].clock and run.verdicts[bad].counted


def test_the_rule_checks_both_ends_of_a_span() -> None:
    t = Tree()
    t.add("badge.run", start=0, end=DAY_NS * 3)
    (span,) = t.spans
    assert clock_problem(span).startswith("ends more than a day after")
    assert clock_problem(span._replace(end_ns=span.start_ns + 1)) == ""
    assert clock_problem(span._replace(start_ns=CLOCK_FLOOR_NS - 1)).startswith("starts before")

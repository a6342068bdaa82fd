"""Diagnostics (docs/scoring.md "Diagnostics"): the weakest axis and what costs
each axis its points, over the radar cohort."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import scoring
from scoring.diagnostics import RunOffender, TaskOffender, _weakest

START = datetime(2026, 11, 1, tzinfo=UTC)


def run(i: int, **over: Any) -> scoring.RunRecord:
    fields: dict[str, Any] = dict(
        id=f"r{i:03d}",
        status="completed",
        success=True,
        latency_ms=300.0,
        cost_usd=0.002,
        steps=2,
        task_id="t",
        ended_at=START + timedelta(minutes=i),
    )
    fields.update(over)
    return scoring.RunRecord(**fields)


def test_a_perfect_agent_has_no_weakest_axis_and_no_offenders() -> None:
    result = scoring.diagnose([run(i) for i in range(6)])
    assert result.weakest_axis is None
    assert all(axis.offenders == () for axis in result.axes.values())
    assert scoring.diagnose([]).weakest_axis is None  # no evidence at all


def test_slow_runs_are_the_latency_offenders_slowest_first_ties_by_id() -> None:
    runs = [run(i) for i in range(3)] + [
        run(10, latency_ms=4000.0),
        run(11, latency_ms=9000.0),
        run(12, latency_ms=4000.0),
    ]
    result = scoring.diagnose(runs)  # median 2150 ms: latency 67, every other axis 100
    assert result.weakest_axis == "latency"
    assert [o.run_id for o in result.axes["latency"].offenders] == ["r011", "r010", "r012"]
    assert result.axes["latency"].offenders[0] == RunOffender(
        "r011", "t", 9000.0, START + timedelta(minutes=11)
    )


def test_failures_newest_first_and_the_limit_holds() -> None:
    runs = [run(i, success=i % 2 == 0, task_id=f"u{i}") for i in range(10)]
    result = scoring.diagnose(runs, limit=3)
    failures = result.axes["correctness"].offenders
    assert [o.run_id for o in failures] == ["r009", "r007", "r005"]
    assert all(o.value is False for o in failures)
    assert result.weakest_axis == "correctness"  # 50, the lowest


def test_costly_and_busy_runs_and_flaky_tasks() -> None:
    runs = [
        run(0, cost_usd=0.05, steps=9, task_id="a", success=False),
        run(1, cost_usd=0.02, steps=5, task_id="a", success=True),
        run(2, task_id="b", success=True),
        run(3, task_id="b", success=True),
        run(4, task_id="c", success=True),
        run(5, task_id="c", success=False),
        run(6, task_id="c", success=True),
    ]
    result = scoring.diagnose(runs)
    assert [(o.run_id, o.value) for o in result.axes["cost"].offenders] == [
        ("r000", 0.05),
        ("r001", 0.02),
    ]
    assert [(o.run_id, o.value) for o in result.axes["tool_efficiency"].offenders] == [
        ("r000", 9),
        ("r001", 5),
    ]
    assert result.axes["robustness"].offenders == (
        TaskOffender("a", 2, 1, 0.5, ("r001", "r000")),
        TaskOffender("c", 3, 2, 2 / 3, ("r006", "r005", "r004")),
    )


def test_ties_between_axes_go_to_the_first_in_radar_order() -> None:
    scores = {"correctness": 80.0, "latency": None, "cost": 40.0, "tool_efficiency": 40.0}
    assert _weakest({**scores, "robustness": 40.0}) == "cost"
    assert _weakest(dict.fromkeys(scoring.policy.RADAR_AXES)) is None
    one_failure = scoring.diagnose([run(0, success=False)])
    assert one_failure.weakest_axis == "correctness"  # 0; latency null (fewer than 5)


def test_failures_that_ended_at_one_time_are_listed_by_run_id_ascending() -> None:
    """LOOP.md section 3: newest first by terminal_at, ties by run id ascending
    (the cohort itself breaks ties by run id descending)."""
    same = START + timedelta(hours=1)
    runs = [run(i, success=False, ended_at=same) for i in (4, 1, 3, 0, 2)] + [
        run(9, success=False, ended_at=START),  # older: after the five
        run(8, success=False, ended_at=None),  # no terminal time: last
    ]
    failures = scoring.diagnose(runs).axes["correctness"].offenders
    assert [o.run_id for o in failures] == ["r000", "r001", "r002", "r003", "r004", "r009", "r008"]


def test_a_flaky_tasks_run_ids_are_newest_first_ties_by_run_id_ascending() -> None:
    same = START + timedelta(hours=1)
    runs = [
        run(3, task_id="f", success=False, ended_at=same),
        run(1, task_id="f", success=True, ended_at=same),
        run(2, task_id="f", success=True, ended_at=START),
        run(5, task_id="f", success=True, ended_at=same),
    ]
    [flaky] = scoring.diagnose(runs).axes["robustness"].offenders
    assert isinstance(flaky, TaskOffender)
    assert flaky.run_ids == ("r001", "r003", "r005", "r002")

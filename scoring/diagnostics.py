"""What to fix: the weakest radar axis and the runs (or tasks) that cost each
axis its points (docs/scoring.md "Diagnostics"). Pure, over the radar cohort."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scoring import policy
from scoring._math import consistency
from scoring.radar import radar, radar_cohort
from scoring.types import RunRecord


@dataclass(frozen=True, slots=True)
class RunOffender:
    run_id: str
    task_id: str | None
    value: bool | float | int  # the axis's raw figure: success, latency, cost, steps
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class TaskOffender:
    task_id: str
    runs: int
    successes: int
    pass_rate: float
    run_ids: tuple[str, ...]  # newest first


@dataclass(frozen=True, slots=True)
class AxisDiagnosis:
    score: float | None
    offenders: tuple[RunOffender, ...] | tuple[TaskOffender, ...]


@dataclass(frozen=True, slots=True)
class Diagnosis:
    weakest_axis: str | None
    axes: Mapping[str, AxisDiagnosis]


def diagnose(runs: Iterable[RunRecord], limit: int = 10) -> Diagnosis:
    cohort = radar_cohort(runs)  # newest first
    fitness = radar(cohort)
    scores = {axis: getattr(fitness, axis) for axis in policy.RADAR_AXES}
    offenders: dict[str, tuple[RunOffender, ...] | tuple[TaskOffender, ...]] = {
        axis: _worst(cohort, value_of, offends, newest_first=newest_first, limit=limit)
        for axis, (value_of, offends, newest_first) in _RUN_AXES.items()
    }
    offenders["robustness"] = _flaky_tasks(cohort, limit)
    return Diagnosis(
        weakest_axis=_weakest(scores),
        axes={axis: AxisDiagnosis(scores[axis], offenders[axis]) for axis in policy.RADAR_AXES},
    )


# axis -> (the run's figure, when it costs the axis points, newest first or worst first)
_RUN_AXES: Mapping[
    str, tuple[Callable[[RunRecord], bool | float | int | None], Callable[[Any], bool], bool]
] = {
    "correctness": (lambda r: r.success, lambda v: v is False, True),
    "latency": (lambda r: r.latency_ms, lambda v: v > policy.DIAGNOSE_LATENCY_MS, False),
    "cost": (lambda r: r.cost_usd, lambda v: v > policy.DIAGNOSE_COST_USD, False),
    "tool_efficiency": (lambda r: r.steps, lambda v: v > policy.DIAGNOSE_STEPS, False),
}


def _weakest(scores: Mapping[str, float | None]) -> str | None:
    """The lowest non-null axis (ties: the first in radar order); None when no
    axis has evidence or every axis is full."""
    present = [
        (score, i, axis) for i, (axis, score) in enumerate(scores.items()) if score is not None
    ]
    if not present or all(score >= 100.0 for score, _, _ in present):
        return None
    return min(present)[2]


def _worst(
    cohort: list[RunRecord],
    value_of: Callable[[RunRecord], bool | float | int | None],
    offends: Callable[[Any], bool],
    *,
    newest_first: bool,
    limit: int,
) -> tuple[RunOffender, ...]:
    """Runs whose value costs the axis points: the newest first by terminal
    time (correctness) or the largest value first; ties by run id ascending
    (docs/loop.md "Diagnostics"). Not the cohort's own order: it breaks ties
    by run id descending (docs/scoring.md "Fitness radar")."""
    found = []
    for run in cohort:
        value = value_of(run)
        if value is not None and offends(value):
            found.append((_newest(run) if newest_first else -value, run.id, run, value))
    found.sort(key=lambda item: (item[0], item[1]))
    return tuple(RunOffender(r.id, r.task_id, v, r.ended_at) for _, _, r, v in found[:limit])


def _newest(run: RunRecord) -> float:
    """A sort key putting the latest terminal time first (a run without one last)."""
    return -run.ended_at.timestamp() if run.ended_at is not None else math.inf


def _flaky_tasks(cohort: list[RunRecord], limit: int) -> tuple[TaskOffender, ...]:
    """Tasks with >= 2 known outcomes that neither always pass nor always fail,
    the flakiest (largest 4p(1-p)) first, then by task id."""
    by_task: dict[str, list[RunRecord]] = defaultdict(list)
    # Each task's run ids newest first, ties by run id ascending (LOOP.md section 3).
    for run in sorted(cohort, key=lambda r: (_newest(r), r.id)):
        if run.task_id is not None and run.success is not None:
            by_task[run.task_id].append(run)
    found = []
    for task, members in by_task.items():
        successes = sum(1 for r in members if r.success)
        rate = successes / len(members)
        if len(members) >= policy.RADAR_ROBUSTNESS_MIN_OUTCOMES and 0.0 < rate < 1.0:
            found.append(
                (
                    consistency(rate),  # 1 - 4p(1-p): the smallest is the flakiest
                    task,
                    TaskOffender(task, len(members), successes, rate, tuple(r.id for r in members)),
                )
            )
    found.sort(key=lambda item: (item[0], item[1]))
    return tuple(offender for _, _, offender in found[:limit])

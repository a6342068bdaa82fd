"""Tasks paired across the two sides of a compare (docs/loop.md "Compare",
revision 2): per axis, the figure each task gives each side.

A suite screened twice gives both sides the same tasks. Comparing a task
with itself cancels what makes tasks differ (one is always slow, one always
hard), which is most of the spread in a real suite, so a paired test sees a
change that an unpaired one drowns in between-task noise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scoring import policy
from scoring._math import consistency, median
from scoring.stats import Stratum
from scoring.types import RunRecord

# A per-task difference is rounded to this many decimals before ranking, so
# that differences equal in exact arithmetic tie (docs/loop.md "Compare").
DIFFERENCE_DECIMALS = 9


@dataclass(frozen=True, slots=True)
class TaskPair:
    """One paired task on one axis: its figure on each side and the change.

    The figure is the task's median (latency, cost, steps), its consistency
    1 - 4p(1-p) (robustness) or its pass rate (correctness, shown only: the
    correctness test works on the counts)."""

    task_id: str
    base: float
    head: float
    delta: float


def outcome_pairs(
    base: Sequence[RunRecord], head: Sequence[RunRecord]
) -> tuple[list[TaskPair], list[Stratum]]:
    """Correctness: tasks with a known outcome on both sides, as pass rates
    (the evidence) and as 2x2 tables (the test's strata), by task id."""
    before, after = _outcomes(base), _outcomes(head)
    pairs, strata = [], []
    for task in sorted(before.keys() & after.keys()):
        (n1, x1), (n2, x2) = before[task], after[task]
        pairs.append(_pair(task, x1 / n1, x2 / n2))
        strata.append(Stratum(n1, x1, n2, x2))
    return pairs, strata


def value_pairs(
    base: Sequence[RunRecord],
    head: Sequence[RunRecord],
    value: Callable[[RunRecord], float | int | None],
) -> list[TaskPair]:
    """Latency, cost, steps: tasks with a value on both sides, each side's
    median of that task's values."""
    before, after = _medians(base, value), _medians(head, value)
    return [_pair(task, before[task], after[task]) for task in sorted(before.keys() & after.keys())]


def consistency_pairs(base: Sequence[RunRecord], head: Sequence[RunRecord]) -> list[TaskPair]:
    """Robustness: tasks with at least 2 known outcomes on both sides, each
    side's consistency on it (a task can only be flaky against itself)."""
    before, after = _consistencies(base), _consistencies(head)
    return [_pair(task, before[task], after[task]) for task in sorted(before.keys() & after.keys())]


def _pair(task: str, base: float, head: float) -> TaskPair:
    return TaskPair(task, base, head, round(head - base, DIFFERENCE_DECIMALS))


def _outcomes(runs: Iterable[RunRecord]) -> dict[str, tuple[int, int]]:
    """Known outcomes and successes per task."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for run in runs:
        if run.task_id is not None and run.success is not None:
            counts[run.task_id][0] += 1
            counts[run.task_id][1] += int(run.success)
    return {task: (n, x) for task, (n, x) in counts.items()}


def _medians(
    runs: Iterable[RunRecord], value: Callable[[RunRecord], float | int | None]
) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        figure = value(run)
        if run.task_id is not None and figure is not None:
            values[run.task_id].append(float(figure))
    return {task: median(found) for task, found in values.items()}


def _consistencies(runs: Iterable[RunRecord]) -> Mapping[str, float]:
    return {
        task: consistency(x / n)
        for task, (n, x) in _outcomes(runs).items()
        if n >= policy.RADAR_ROBUSTNESS_MIN_OUTCOMES
    }

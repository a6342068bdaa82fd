"""Compare two versions of an agent: per axis, is head better or worse than
base, and is that more than noise? (docs/scoring.md "Compare")

Each side is its own runs; the radar's cohort rule (latest 100 terminal
runs) applies within each side, and every number reuses the scoring core.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scoring import policy
from scoring.composite import composite
from scoring.radar import radar, radar_cohort
from scoring.repeatability import pass_k
from scoring.stats import Test, mann_whitney, two_proportions
from scoring.types import Composite, Radar, Repeatability, RunRecord

IMPROVED, REGRESSED, UNCHANGED = "improved", "regressed", "unchanged"
INSUFFICIENT = "insufficient_evidence"


@dataclass(frozen=True, slots=True)
class Side:
    """One version's figures: composite over all its runs, the rest over its cohort."""

    runs_counted: int
    composite_score: float | None
    success_rate: float | None
    pass_1: float | None
    pass_3: float | None
    pass_5: float | None
    latency_p50_ms: float | None
    cost_p50_usd: float | None
    steps_p50: float | None


@dataclass(frozen=True, slots=True)
class AxisChange:
    base: float | None
    head: float | None
    delta: float | None
    verdict: str
    p_value: float | None


@dataclass(frozen=True, slots=True)
class CompositeChange:
    base: float | None
    head: float | None
    delta: float | None


@dataclass(frozen=True, slots=True)
class TaskChange:
    task_id: str
    base_n: int
    base_successes: int
    head_n: int
    head_successes: int
    change: str  # new, gone, broken, fixed, same


@dataclass(frozen=True, slots=True)
class Comparison:
    base: Side
    head: Side
    axes: Mapping[str, AxisChange]
    composite: CompositeChange
    tasks: tuple[TaskChange, ...]
    regressed: bool


# The per-run value each tested axis is about; larger is worse for all three.
_VALUES: Mapping[str, Callable[[RunRecord], float | int | None]] = {
    "latency": lambda r: r.latency_ms,
    "cost": lambda r: r.cost_usd,
    "tool_efficiency": lambda r: r.steps,
}


@dataclass(frozen=True, slots=True)
class Version:
    """One side as a store can give it without loading every run: the radar
    cohort, the composite over all its runs, and pass^k over all of them."""

    cohort: Sequence[RunRecord]
    composite: Composite | None
    repeatability: Repeatability


def version_of(runs: Iterable[RunRecord]) -> Version:
    """A side from all of its runs."""
    everything = list(runs)
    return Version(radar_cohort(everything), composite(everything), pass_k(everything))


def compare(base_runs: Iterable[RunRecord], head_runs: Iterable[RunRecord]) -> Comparison:
    return compare_versions(version_of(base_runs), version_of(head_runs))


def compare_versions(base: Version, head: Version) -> Comparison:
    base_cohort, head_cohort = radar_cohort(base.cohort), radar_cohort(head.cohort)
    base_radar, head_radar = radar(base_cohort), radar(head_cohort)
    axes: dict[str, AxisChange] = {}
    for axis in policy.RADAR_AXES:
        before, after = getattr(base_radar, axis), getattr(head_radar, axis)
        if axis == "robustness":
            axes[axis] = _by_threshold(before, after)
            continue
        if axis == "correctness":
            test = _correctness(base_cohort, head_cohort)
            worse = test is not None and test.z < 0  # fewer passes
        else:
            value = _VALUES[axis]
            test = mann_whitney(_values(base_cohort, value), _values(head_cohort, value))
            worse = test is not None and test.z > 0  # larger latency, cost, steps
        axes[axis] = _tested(before, after, test, worse)
    base_side, head_side = _side(base, base_radar), _side(head, head_radar)
    return Comparison(
        base=base_side,
        head=head_side,
        axes=axes,
        composite=CompositeChange(
            base_side.composite_score,
            head_side.composite_score,
            _delta(base_side.composite_score, head_side.composite_score),
        ),
        tasks=_tasks(base_cohort, head_cohort),
        regressed=any(change.verdict == REGRESSED for change in axes.values()),
    )


def _correctness(base: Sequence[RunRecord], head: Sequence[RunRecord]) -> Test | None:
    base_known = [r.success for r in base if r.success is not None]
    head_known = [r.success for r in head if r.success is not None]
    return two_proportions(sum(base_known), len(base_known), sum(head_known), len(head_known))


def _values(
    runs: Sequence[RunRecord], value: Callable[[RunRecord], float | int | None]
) -> list[float]:
    found = [value(r) for r in runs]
    return [float(v) for v in found if v is not None]


def _tested(
    before: float | None, after: float | None, test: Test | None, worse: bool
) -> AxisChange:
    delta = _delta(before, after)
    if test is None:
        return AxisChange(_axis(before), _axis(after), delta, INSUFFICIENT, None)
    verdict = UNCHANGED
    if test.p_value < policy.COMPARE_ALPHA:
        verdict = REGRESSED if worse else IMPROVED
    p_value = round(test.p_value, policy.COMPARE_P_DECIMALS)
    return AxisChange(_axis(before), _axis(after), delta, verdict, p_value)


def _by_threshold(before: float | None, after: float | None) -> AxisChange:
    """Robustness has no test: a change of at least the threshold either way counts."""
    delta = _delta(before, after)
    if delta is None:
        return AxisChange(_axis(before), _axis(after), None, INSUFFICIENT, None)
    verdict = UNCHANGED
    if delta <= -policy.COMPARE_ROBUSTNESS_DELTA:
        verdict = REGRESSED
    elif delta >= policy.COMPARE_ROBUSTNESS_DELTA:
        verdict = IMPROVED
    return AxisChange(_axis(before), _axis(after), delta, verdict, None)


def _axis(value: float | None) -> float | None:
    return None if value is None else round(value, policy.COMPARE_AXIS_DECIMALS)


def _delta(before: float | None, after: float | None) -> float | None:
    if before is None or after is None:
        return None
    return round(after - before, policy.COMPARE_AXIS_DECIMALS)


def _side(version: Version, fitness: Radar) -> Side:
    headline, repeat = version.composite, version.repeatability
    return Side(
        runs_counted=fitness.runs_counted,
        composite_score=headline.composite_score if headline else None,
        success_rate=headline.success_rate if headline else None,
        pass_1=repeat.pass_1,
        pass_3=repeat.pass_3,
        pass_5=repeat.pass_5,
        latency_p50_ms=fitness.latency_p50_ms,
        cost_p50_usd=fitness.cost_p50_usd,
        steps_p50=fitness.steps_p50,
    )


def _tasks(base: Sequence[RunRecord], head: Sequence[RunRecord]) -> tuple[TaskChange, ...]:
    """Every task with a known outcome in either cohort, and what happened to it."""
    base_n, base_ok = _outcomes(base)
    head_n, head_ok = _outcomes(head)
    changes = []
    for task in sorted(set(base_n) | set(head_n)):
        changes.append(
            TaskChange(
                task,
                base_n[task],
                base_ok[task],
                head_n[task],
                head_ok[task],
                _task_change(base_n[task], base_ok[task], head_n[task], head_ok[task]),
            )
        )
    return tuple(changes)


def _outcomes(runs: Sequence[RunRecord]) -> tuple[Counter[str], Counter[str]]:
    known = [
        (r.task_id, r.success) for r in runs if r.task_id is not None and r.success is not None
    ]
    return Counter(task for task, _ in known), Counter(task for task, ok in known if ok)


def _task_change(base_n: int, base_ok: int, head_n: int, head_ok: int) -> str:
    if not base_n:
        return "new"
    if not head_n:
        return "gone"
    base_all, head_all = base_ok == base_n, head_ok == head_n
    if base_all and not head_all:
        return "broken"
    if head_all and not base_all:
        return "fixed"
    return "same"

"""Compare two versions of an agent: per axis, is head better or worse than
base, and is that more than noise? (docs/loop.md "Compare", revision 2)

Each side is its own runs; the radar's cohort rule (latest 100 terminal
runs) applies within each side, and every number reuses the scoring core.
Compare gates releases, so it is built to find real regressions with few
runs and rarely alarm on an unchanged agent: tasks are paired when at least
5 match (scoring/pairing.py), and Holm's correction keeps the chance of any
false `regressed` across the five axes near alpha.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scoring import policy
from scoring.composite import composite
from scoring.pairing import TaskPair, consistency_pairs, outcome_pairs, value_pairs
from scoring.radar import radar, radar_cohort
from scoring.repeatability import pass_k
from scoring.stats import (
    Test,
    cochran_mantel_haenszel,
    holm,
    mann_whitney,
    two_proportions,
    wilcoxon_signed_rank,
)
from scoring.types import Composite, Radar, Repeatability, RunRecord

IMPROVED, REGRESSED, UNCHANGED = "improved", "regressed", "unchanged"
INSUFFICIENT = "insufficient_evidence"

# The `test` each branch names (docs/loop.md "Compare").
CMH, WILCOXON = "cochran_mantel_haenszel", "wilcoxon_signed_rank"
TWO_PROPORTIONS, MANN_WHITNEY = "two_proportion_z", "mann_whitney_u"


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
    """One axis's verdict. `p_value` is the test's raw p, `p_adjusted` its
    Holm-adjusted one (both rounded for reporting); `pairs` are the paired
    tasks' figures that drove a paired test (empty when unpaired)."""

    base: float | None
    head: float | None
    delta: float | None
    verdict: str
    test: str | None
    paired_tasks: int | None
    p_value: float | None
    p_adjusted: float | None
    pairs: tuple[TaskPair, ...] = ()
    needed: str | None = None  # for insufficient_evidence: what is missing, in words


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


@dataclass(frozen=True, slots=True)
class _Tested:
    """An axis before Holm: which test, on how many pairs, its raw result."""

    test: str | None
    pairs: tuple[TaskPair, ...]  # the tasks that pair up, tested paired or not
    paired: bool
    result: Test | None  # None: insufficient evidence
    worse_when_z_above_zero: bool
    needed: str | None = None


def version_of(runs: Iterable[RunRecord]) -> Version:
    """A side from all of its runs."""
    everything = list(runs)
    return Version(radar_cohort(everything), composite(everything), pass_k(everything))


def compare(
    base_runs: Iterable[RunRecord],
    head_runs: Iterable[RunRecord],
    min_effect: float = policy.COMPARE_MIN_EFFECT,
) -> Comparison:
    return compare_versions(version_of(base_runs), version_of(head_runs), min_effect)


def validate_min_effect(min_effect: float) -> float:
    """A finite number of axis points >= 0, else ValueError (the API's 422)."""
    if not math.isfinite(min_effect) or min_effect < 0:
        raise ValueError(f"min_effect must be a finite number >= 0, not {min_effect}")
    return float(min_effect)


def compare_versions(
    base: Version, head: Version, min_effect: float = policy.COMPARE_MIN_EFFECT
) -> Comparison:
    """`min_effect`: the axis points a significant change must also move by
    to be `regressed` or `improved` (docs/loop.md "Small changes")."""
    least = validate_min_effect(min_effect)
    base_cohort, head_cohort = radar_cohort(base.cohort), radar_cohort(head.cohort)
    base_radar, head_radar = radar(base_cohort), radar(head_cohort)
    values = {
        axis: (getattr(base_radar, axis), getattr(head_radar, axis)) for axis in policy.RADAR_AXES
    }
    tested = {
        axis: _test_axis(axis, base_cohort, head_cohort, before is None or after is None)
        for axis, (before, after) in values.items()
    }
    adjusted = _holm(tested)
    axes = {
        axis: _judged(*values[axis], tested[axis], adjusted.get(axis), least)
        for axis in policy.RADAR_AXES
    }
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


def _test_axis(
    axis: str, base: Sequence[RunRecord], head: Sequence[RunRecord], no_value: bool
) -> _Tested:
    """Pair the tasks; with enough pairs test them paired, else unpaired.

    With an axis null on either side the branch is still named, untested."""
    strata = None
    if axis == "correctness":
        pairs, strata = outcome_pairs(base, head)
    elif axis == "robustness":
        pairs = consistency_pairs(base, head)
    else:
        pairs = value_pairs(base, head, _VALUES[axis])
    worse_above = axis not in ("correctness", "robustness")  # fewer passes / consistency
    if len(pairs) >= policy.COMPARE_MIN_PAIRED_TASKS:
        name = CMH if axis == "correctness" else WILCOXON
        # Unreachable by the radar's rules (5 paired tasks give both sides a
        # value), kept so an axis without a value can never get a verdict.
        untested = "no value on one side" if no_value else None
        result = None
        if not no_value:
            result = (
                cochran_mantel_haenszel(strata)
                if strata is not None
                else wilcoxon_signed_rank([pair.delta for pair in pairs])
            )
        return _Tested(name, tuple(pairs), True, result, worse_above, untested)
    short = f"{len(pairs)} paired tasks, need {policy.COMPARE_MIN_PAIRED_TASKS}"
    if axis == "robustness":  # a task can only be flaky against itself: paired or nothing
        return _Tested(None, tuple(pairs), False, None, worse_above, short)
    if axis == "correctness":
        test, result = TWO_PROPORTIONS, None if no_value else _unpaired_outcomes(base, head)
    else:
        test, result = MANN_WHITNEY, None if no_value else _unpaired_values(base, head, axis)
    needed = None if result else f"{short}; unpaired: {_counts(base, head, axis)}"
    return _Tested(test, tuple(pairs), False, result, worse_above, needed)


def _unpaired_outcomes(base: Sequence[RunRecord], head: Sequence[RunRecord]) -> Test | None:
    before = [r.success for r in base if r.success is not None]
    after = [r.success for r in head if r.success is not None]
    return two_proportions(sum(before), len(before), sum(after), len(after))


def _unpaired_values(
    base: Sequence[RunRecord], head: Sequence[RunRecord], axis: str
) -> Test | None:
    return mann_whitney(_values(base, _VALUES[axis]), _values(head, _VALUES[axis]))


def _counts(base: Sequence[RunRecord], head: Sequence[RunRecord], axis: str) -> str:
    """How many values an unpaired test had on each side, and the minimum it needs."""
    if axis == "correctness":
        sizes, what = [sum(1 for r in s if r.success is not None) for s in (base, head)], "outcomes"
    else:
        sizes, what = [len(_values(side, _VALUES[axis])) for side in (base, head)], "values"
    least = policy.COMPARE_MIN_VALUES
    return f"{sizes[0]} / {sizes[1]} {what} on base / head, need {least} each"


def _values(
    runs: Sequence[RunRecord], value: Callable[[RunRecord], float | int | None]
) -> list[float]:
    found = [value(r) for r in runs]
    return [float(v) for v in found if v is not None]


def _holm(tested: Mapping[str, _Tested]) -> dict[str, float]:
    """Holm across the axes that have a p-value, unrounded, ties in axis order."""
    raw = {
        axis: result.p_value
        for axis in policy.RADAR_AXES
        if (result := tested[axis].result) is not None
    }
    return dict(zip(raw, holm(list(raw.values())), strict=True))


def _judged(
    before: float | None,
    after: float | None,
    tested: _Tested,
    adjusted: float | None,
    min_effect: float,
) -> AxisChange:
    paired_tasks = len(tested.pairs) if tested.paired else None
    pairs = tested.pairs
    delta = _delta(before, after)
    result = tested.result
    if result is None or adjusted is None:
        return AxisChange(
            _axis(before),
            _axis(after),
            delta,
            INSUFFICIENT,
            tested.test,
            paired_tasks,
            None,
            None,
            pairs,
            tested.needed,
        )
    verdict = UNCHANGED
    # The reported (rounded) delta against min_effect, so a reader can check it.
    large_enough = delta is not None and abs(delta) >= min_effect
    if adjusted < policy.COMPARE_ALPHA and large_enough:
        worse = result.z > 0 if tested.worse_when_z_above_zero else result.z < 0
        verdict = REGRESSED if worse else IMPROVED
    return AxisChange(
        _axis(before),
        _axis(after),
        delta,
        verdict,
        tested.test,
        paired_tasks,
        round(result.p_value, policy.COMPARE_P_DECIMALS),
        round(adjusted, policy.COMPARE_P_DECIMALS),
        pairs,
    )


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

"""Fitness radar (docs/scoring.md "The fitness radar"): where is this agent strong and weak?"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from scoring import policy
from scoring._math import clamp, consistency, mean, median
from scoring.types import Radar, RunRecord
from scoring.weights import validate_weights

_OLDEST = datetime.min.replace(tzinfo=UTC)


def radar_cohort(
    runs: Iterable[RunRecord], size: int | None = policy.RADAR_COHORT_SIZE
) -> list[RunRecord]:
    """The latest terminal runs, newest first by (ended_at, id); all of
    them with `size` None (a screening is judged on every run it made)."""
    terminal = [r for r in runs if r.status in policy.TERMINAL_STATUSES]
    terminal.sort(key=lambda r: (r.ended_at or _OLDEST, r.id), reverse=True)
    return terminal if size is None else terminal[:size]


def radar(
    runs: Iterable[RunRecord],
    weights: Mapping[str, float] | None = None,
    *,
    cohort_size: int | None = policy.RADAR_COHORT_SIZE,
) -> Radar:
    """Five axes in [0, 100] or None, and their weighted mean."""
    wanted = validate_weights(weights) if weights is not None else default_weights()
    cohort = sorted(radar_cohort(runs, cohort_size), key=lambda r: r.id)
    known = [r.success for r in cohort if r.success is not None]
    latencies = [r.latency_ms for r in cohort if r.latency_ms is not None]
    costs = [r.cost_usd for r in cohort if r.cost_usd is not None]
    steps = [float(r.steps) for r in cohort if r.steps is not None]
    latency_p50 = median(latencies) if latencies else None
    cost_p50 = median(costs) if costs else None
    steps_p50 = median(steps) if steps else None
    axes: dict[str, float | None] = {
        "correctness": 100.0 * sum(known) / len(known) if known else None,
        "latency": _latency_axis(latency_p50, len(latencies)),
        "cost": _cost_axis(cost_p50) if cost_p50 is not None else None,
        "tool_efficiency": _steps_axis(steps_p50) if steps_p50 is not None else None,
        "robustness": _robustness_axis(cohort),
    }
    applied, score = _weighted_mean(axes, wanted)
    return Radar(
        correctness=axes["correctness"],
        latency=axes["latency"],
        cost=axes["cost"],
        tool_efficiency=axes["tool_efficiency"],
        robustness=axes["robustness"],
        composite_score=score,
        runs_counted=len(cohort),
        latency_p50_ms=latency_p50,
        cost_p50_usd=cost_p50,
        steps_p50=steps_p50,
        weights=applied,
    )


def evidence_needed(runs: Iterable[RunRecord]) -> dict[str, int]:
    """For each axis the cohort leaves null, how many more runs (carrying that
    axis's figure) would give it a value: a null axis means "no evidence
    yet", never 0, and this says how far away the evidence is."""
    cohort = radar_cohort(runs)
    known_per_task: dict[str, int] = defaultdict(int)
    for run in cohort:
        if run.task_id is not None and run.success is not None:
            known_per_task[run.task_id] += 1
    has = {
        "correctness": sum(1 for r in cohort if r.success is not None),
        "latency": sum(1 for r in cohort if r.latency_ms is not None),
        "cost": sum(1 for r in cohort if r.cost_usd is not None),
        "tool_efficiency": sum(1 for r in cohort if r.steps is not None),
        "robustness": max(known_per_task.values(), default=0),
    }
    enough = {
        "correctness": 1,
        "latency": policy.RADAR_LATENCY_MIN_RUNS,
        "cost": 1,
        "tool_efficiency": 1,
        "robustness": policy.RADAR_ROBUSTNESS_MIN_OUTCOMES,
    }
    return {
        axis: enough[axis] - has[axis] for axis in policy.RADAR_AXES if has[axis] < enough[axis]
    }


def default_weights() -> dict[str, float]:
    """Every axis at the default weight (docs/scoring.md "The fitness radar")."""
    return dict.fromkeys(policy.RADAR_AXES, policy.RADAR_DEFAULT_WEIGHT)


def _latency_axis(p50_ms: float | None, count: int) -> float | None:
    if p50_ms is None or count < policy.RADAR_LATENCY_MIN_RUNS:
        return None
    over = p50_ms - policy.RADAR_LATENCY_BASE_MS
    return clamp(100.0 - policy.RADAR_LATENCY_POINTS_PER_100MS * over / 100.0)


def _cost_axis(p50_usd: float) -> float:
    return clamp(100.0 - (p50_usd - policy.RADAR_COST_BASE_USD) / policy.RADAR_COST_USD_PER_POINT)


def _steps_axis(p50_steps: float) -> float:
    return clamp(100.0 - policy.RADAR_POINTS_PER_STEP * (p50_steps - policy.RADAR_STEPS_BASE))


def _robustness_axis(cohort: list[RunRecord]) -> float | None:
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for run in cohort:
        if run.task_id is not None and run.success is not None:
            outcomes[run.task_id].append(run.success)
    per_task = [
        100.0 * consistency(sum(results) / len(results))
        for _, results in sorted(outcomes.items())
        if len(results) >= policy.RADAR_ROBUSTNESS_MIN_OUTCOMES
    ]
    return mean(per_task) if per_task else None


def _summable(wanted: Mapping[str, float], present: list[str]) -> Mapping[str, float]:
    """The weights, or the same ratios divided by the largest where the weighted
    sum would overflow a float: any finite weights are valid (docs/scoring.md "The fitness radar"),
    1e308 included. Axes are at most 100."""
    if math.isfinite(sum(wanted.get(name, 0.0) for name in present) * 100.0):
        return wanted
    largest = max(wanted.get(name, 0.0) for name in present)
    return {name: wanted.get(name, 0.0) / largest for name in present}


def _weighted_mean(
    axes: Mapping[str, float | None], wanted: Mapping[str, float]
) -> tuple[dict[str, float], float | None]:
    """Renormalise the wanted weights over the non-null axes."""
    present = [name for name in policy.RADAR_AXES if axes[name] is not None]
    wanted = _summable(wanted, present)
    total = math.fsum(wanted.get(name, 0.0) for name in present)
    if total <= 0:
        return dict.fromkeys(policy.RADAR_AXES, 0.0), None
    applied = {
        name: (wanted.get(name, 0.0) / total if name in present else 0.0)
        for name in policy.RADAR_AXES
    }
    weighted = math.fsum((axes[name] or 0.0) * wanted.get(name, 0.0) for name in present)
    return applied, round(weighted / total, policy.COMPOSITE_DECIMALS)

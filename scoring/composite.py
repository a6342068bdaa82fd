"""Headline composite (docs/scoring.md "The composite"): how is this agent ranked?"""

from __future__ import annotations

import math
from collections.abc import Iterable

from scoring import policy
from scoring._math import consistency, piecewise_linear
from scoring.types import Composite, RunRecord


def composite(runs: Iterable[RunRecord]) -> Composite | None:
    """Score all completed runs; None when there is none (not 0)."""
    completed = sorted((r for r in runs if r.status == "completed"), key=lambda r: r.id)
    if not completed:
        return None
    successes = sum(1 for r in completed if r.success is True)
    latencies = [r.latency_ms for r in completed if r.latency_ms is not None]
    costs = [r.cost_usd if r.cost_usd is not None else 0.0 for r in completed]
    return composite_from_aggregates(
        completed_runs=len(completed),
        successful_runs=successes,
        latency_sum_ms=math.fsum(latencies),
        latency_count=len(latencies),
        cost_sum_usd=math.fsum(costs),
    )


def composite_from_aggregates(
    *,
    completed_runs: int,
    successful_runs: int,
    latency_sum_ms: float,
    latency_count: int,
    cost_sum_usd: float,
) -> Composite:
    """The composite from per-agent sums, so a store can aggregate in SQL.

    `composite()` goes through here too, which is what keeps the two equal.
    """
    success_rate = successful_runs / completed_runs
    gate = consistency(success_rate) if completed_runs >= policy.CONSISTENCY_MIN_RUNS else 1.0
    avg_latency = latency_sum_ms / latency_count if latency_count else None
    latency_score = (
        piecewise_linear(avg_latency, policy.LATENCY_ANCHORS_MS) if avg_latency is not None else 1.0
    )
    avg_cost = cost_sum_usd / completed_runs
    cost_score = piecewise_linear(avg_cost, policy.COST_ANCHORS_USD)
    reliability = gate * latency_score
    if successful_runs == 0:
        score = 0.0  # policy 2026-07-zero-success-v1: no success, no score
    else:
        weighted = (
            policy.WEIGHT_SUCCESS * success_rate
            + policy.WEIGHT_RELIABILITY * reliability
            + policy.WEIGHT_COST * cost_score
        )
        score = round(100 * weighted, policy.COMPOSITE_DECIMALS)
    return Composite(
        composite_score=score,
        success_rate=success_rate,
        consistency=gate,
        latency_score=latency_score,
        reliability_score=reliability,
        cost_score=cost_score,
        avg_latency_ms=avg_latency,
        avg_cost_usd=avg_cost,
        completed_runs=completed_runs,
        successful_runs=successful_runs,
    )


def composite_trend(runs: Iterable[RunRecord], windows: int) -> list[float | None]:
    """The composite over time: completed runs in order of completion (by
    `ended_at`, then id), cut into at most `windows` consecutive groups of
    near-equal size, each scored alone. Oldest first; empty without runs."""
    completed = [r for r in runs if r.status == "completed"]
    completed.sort(key=lambda r: (r.ended_at is not None, r.ended_at, r.id))
    count = min(windows, len(completed))
    trend: list[float | None] = []
    for index in range(count):
        group = completed[index * len(completed) // count : (index + 1) * len(completed) // count]
        scored = composite(group)
        trend.append(scored.composite_score if scored else None)
    return trend

"""Hypothesis properties: ranges, monotone pass^k, order independence."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

import scoring

STATUSES = st.sampled_from(["completed", "failed", "timeout", "running"])


@st.composite
def run_lists(draw: st.DrawFn) -> list[scoring.RunRecord]:
    count = draw(st.integers(0, 40))
    base = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        scoring.RunRecord(
            id=f"r{i:03d}",
            status=draw(STATUSES),
            success=draw(st.one_of(st.none(), st.booleans())),
            latency_ms=draw(st.one_of(st.none(), st.floats(0, 60_000))),
            cost_usd=draw(st.one_of(st.none(), st.floats(0, 1))),
            steps=draw(st.one_of(st.none(), st.integers(0, 50))),
            task_id=draw(st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))),
            ended_at=draw(
                st.one_of(
                    st.none(), st.integers(0, 10_000).map(lambda s: base + timedelta(seconds=s))
                )
            ),
        )
        for i in range(count)
    ]


def in_range(value: float | None) -> bool:
    return value is None or 0.0 <= value <= 100.0


@settings(max_examples=150, deadline=None)
@given(run_lists(), st.randoms(use_true_random=False))
def test_scores_in_range_and_order_independent(
    runs: list[scoring.RunRecord], rnd: random.Random
) -> None:
    shuffled = list(runs)
    rnd.shuffle(shuffled)
    result = scoring.composite(runs)
    assert result is None or in_range(result.composite_score)
    assert result == scoring.composite(shuffled)
    radar = scoring.radar(runs)
    for axis in (
        "correctness",
        "latency",
        "cost",
        "tool_efficiency",
        "robustness",
        "composite_score",
    ):
        assert in_range(getattr(radar, axis))
    assert radar == scoring.radar(shuffled)
    repeat = scoring.pass_k(runs)
    assert repeat == scoring.pass_k(shuffled)
    if repeat.pass_1 is not None:
        assert repeat.pass_3 is not None and repeat.pass_5 is not None
        assert repeat.pass_1 >= repeat.pass_3 >= repeat.pass_5


@settings(max_examples=200, deadline=None)
@given(run_lists())
def test_evidence_is_needed_exactly_for_the_null_axes_and_that_many_runs_fill_them(
    runs: list[scoring.RunRecord],
) -> None:
    radar = scoring.radar(runs)
    needed = scoring.evidence_needed(runs)
    assert set(needed) == {
        axis for axis in scoring.default_weights() if getattr(radar, axis) is None
    }
    assert all(count >= 1 for count in needed.values())
    # that many newer runs, each carrying every figure, on the task nearest to
    # two known outcomes, fill every axis
    known: dict[str, int] = {}
    for run in scoring.radar_cohort(runs):
        if run.task_id is not None and run.success is not None:
            known[run.task_id] = known.get(run.task_id, 0) + 1
    task = max(sorted(known), key=lambda t: known[t], default="filled")
    latest = max((r.ended_at for r in runs if r.ended_at), default=None)
    base = latest or datetime(2026, 1, 1, tzinfo=UTC)
    extra = [
        scoring.RunRecord(
            id=f"z{i:03d}",
            status="completed",
            success=True,
            latency_ms=100.0,
            cost_usd=0.001,
            steps=1,
            task_id=task,
            ended_at=base + timedelta(seconds=i + 1),
        )
        for i in range(max(needed.values(), default=0))
    ]
    filled = scoring.radar([*runs, *extra])
    if len(scoring.radar_cohort(runs)) + len(extra) <= 100:
        for axis in needed:
            assert getattr(filled, axis) is not None

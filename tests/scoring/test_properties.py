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

"""The docs/scoring.md worked example, by hand: 9 runs -> 98.72."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import scoring


def worked_example_runs() -> list[scoring.RunRecord]:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    return [
        scoring.RunRecord(
            f"r{i}",
            "completed",
            True,
            161.56,
            0.0029267,
            1,
            f"t{i % 3}",
            start + timedelta(minutes=i),
        )
        for i in range(9)
    ]


def test_worked_example_composite_is_98_72() -> None:
    result = scoring.composite(worked_example_runs())
    assert result is not None
    assert result.composite_score == 98.72
    assert result.success_rate == 1.0
    assert result.reliability_score == 1.0
    assert result.cost_score == pytest.approx(0.957184, abs=1e-6)


def test_worked_example_radar_is_100() -> None:
    assert scoring.radar(worked_example_runs()).composite_score == 100.0

"""Edge rules of docs/scoring.md that the vectors do not pin on their own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import scoring
from scoring._math import piecewise_linear
from scoring.policy import COST_ANCHORS_USD
from scoring.repeatability import pass_hat_k


def run(i: int, **over: object) -> scoring.RunRecord:
    fields: dict[str, object] = dict(
        id=f"r{i:03d}",
        status="completed",
        success=True,
        latency_ms=100.0,
        cost_usd=0.001,
        steps=2,
        task_id="t",
        ended_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    fields.update(over)
    return scoring.RunRecord(**fields)  # type: ignore[arg-type]


def test_parse_weights_accepts_the_documented_form() -> None:
    assert scoring.parse_weights("correctness:2, latency:1") == {
        "correctness": 2.0,
        "latency": 1.0,
        "cost": 0.0,
        "tool_efficiency": 0.0,
        "robustness": 0.0,
    }


@pytest.mark.parametrize(
    "text",
    [
        "",
        "speed:1",
        "correctness:-1",
        "correctness:nan",
        "correctness:inf",
        "correctness",
        "correctness:x",
        "correctness:1,correctness:2",
    ],
)
def test_parse_weights_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        scoring.parse_weights(text)


def test_radar_rejects_bad_weight_mapping() -> None:
    with pytest.raises(ValueError):
        scoring.radar([run(0)], {"correctness": -1.0})


def test_the_largest_finite_weights_give_the_same_radar_as_their_ratio() -> None:
    """docs/scoring.md "The fitness radar": any non-negative finite weight is valid; 1e308 must not
    overflow the weighted sum."""
    runs = [run(i, success=i % 3 != 0, latency_ms=100.0 + i) for i in range(30)]
    huge = scoring.radar(runs, {"correctness": 1e308, "latency": 1e308, "cost": 5e307})
    ratio = scoring.radar(runs, {"correctness": 2.0, "latency": 2.0, "cost": 1.0})
    assert huge.composite_score == ratio.composite_score is not None
    assert huge.weights == pytest.approx(ratio.weights)


def test_null_latencies_leave_the_average_and_default_to_neutral() -> None:
    result = scoring.composite([run(0, latency_ms=None), run(1, latency_ms=None)])
    assert result is not None
    assert result.avg_latency_ms is None
    assert result.latency_score == 1.0


def test_radar_cohort_takes_latest_hundred_with_null_end_oldest() -> None:
    runs = [
        run(i, ended_at=datetime(2026, 1, 1, 0, i // 60, i % 60, tzinfo=UTC)) for i in range(120)
    ]
    runs.append(run(999, ended_at=None))
    cohort = scoring.radar_cohort(runs)
    assert len(cohort) == 100
    assert cohort[0].id == "r119"
    assert all(r.id != "r999" for r in cohort)


def test_pass_hat_k_counts_without_replacement() -> None:
    assert pass_hat_k(5, 4, 3) == pytest.approx(4 / 10)
    assert pass_hat_k(3, 3, 5) == 0.0


def test_cost_curve_is_flat_beyond_the_last_anchor() -> None:
    assert piecewise_linear(1.0, COST_ANCHORS_USD) == 0.0
    assert piecewise_linear(0.0, COST_ANCHORS_USD) == 1.0


def test_running_and_unknown_task_runs_leave_pass_k() -> None:
    runs = [run(i, task_id=None) for i in range(5)] + [run(9, status="running")]
    assert scoring.pass_k(runs).tasks_counted == 0


def test_composite_trend_scores_consecutive_groups_of_completed_runs_oldest_first() -> None:
    base = datetime(2026, 1, 1, tzinfo=UTC)

    def run(i: int, success: bool, status: str = "completed") -> scoring.RunRecord:
        return scoring.RunRecord(
            id=f"r{i:02d}",
            status=status,
            success=success,
            latency_ms=100.0,
            cost_usd=0.0,
            steps=1,
            task_id="t",
            ended_at=base + timedelta(seconds=i),
        )

    # four failures, then four successes, delivered newest first; a running run is no evidence
    runs = [run(i, i >= 4) for i in reversed(range(8))] + [run(99, True, "running")]
    assert scoring.composite_trend(runs, 2) == [0.0, 100.0]
    assert scoring.composite_trend(runs, 4) == [0.0, 0.0, 100.0, 100.0]
    assert len(scoring.composite_trend(runs, 50)) == 8  # one run per group at most
    assert scoring.composite_trend([], 10) == []
    undated = scoring.RunRecord("u", "completed", True, 1.0, 0.0, 1, "t", None)
    assert scoring.composite_trend([run(1, False), undated], 2) == [100.0, 0.0]  # undated first

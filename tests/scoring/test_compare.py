"""Compare (docs/scoring.md "Compare"): the statistics by hand, the
specification's vectors, and properties that hold for any runs."""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scoring
from scoring.stats import mann_whitney, two_proportions
from tests.conftest import FIXTURES
from tests.scoring.vectors import to_run

VECTORS: list[dict[str, Any]] = json.loads((FIXTURES / "compare_vectors.json").read_text())[
    "vectors"
]
START = datetime(2026, 11, 1, tzinfo=UTC)


def run(i: int, side: str = "b", **over: object) -> scoring.RunRecord:
    fields: dict[str, Any] = dict(
        id=f"{side}{i:03d}",
        status="completed",
        success=True,
        latency_ms=300.0,
        cost_usd=0.002,
        steps=3,
        task_id=f"t{i % 3}",
        ended_at=START + timedelta(minutes=i),
    )
    fields.update(over)
    return scoring.RunRecord(**fields)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_every_specified_vector_is_reproduced(vector: dict[str, Any]) -> None:
    result = scoring.compare(
        [to_run(r) for r in vector["base"]], [to_run(r) for r in vector["head"]]
    )
    got = {
        "axes": {axis: asdict(change) for axis, change in result.axes.items()},
        "composite": asdict(result.composite),
        "tasks": [asdict(task) for task in result.tasks],
        "regressed": result.regressed,
    }
    assert got == vector["expected"]


def test_two_proportions_by_hand() -> None:
    """19/20 then 8/20: pooled p = 27/40; z = (0.4 - 0.95) / sqrt(p(1-p)(1/20+1/20))."""
    pooled = 27 / 40
    z = (8 / 20 - 19 / 20) / math.sqrt(pooled * (1 - pooled) * (2 / 20))
    test = two_proportions(19, 20, 8, 20)
    assert test is not None
    assert test.z == pytest.approx(z) and test.z == pytest.approx(-3.7134, abs=1e-4)
    assert test.p_value == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))
    assert test.p_value == pytest.approx(0.000205, abs=1e-6)


def test_two_proportions_without_variation_or_evidence() -> None:
    assert two_proportions(6, 6, 6, 6) == two_proportions(0, 5, 0, 9)
    everything = two_proportions(6, 6, 6, 6)
    assert everything is not None and (everything.z, everything.p_value) == (0.0, 1.0)
    assert two_proportions(3, 4, 20, 20) is None  # base below 5
    assert two_proportions(20, 20, 4, 4) is None  # head below 5


def test_mann_whitney_by_hand_without_ties() -> None:
    """Head's ranks 6..10 sum to 40; U = 40 - 15 = 25; mean 12.5; var = 25/12 x 11."""
    test = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    z = (25 - 12.5) / math.sqrt(25 / 12 * 11)
    assert test is not None and test.z == pytest.approx(z)
    assert test.p_value == pytest.approx(0.009023, abs=1e-6)


def test_mann_whitney_by_hand_with_ties() -> None:
    """Values 1 1 2 2 3 | 2 3 3 4 4. Ranks: 1,1 -> 1.5; 2,2,2 -> 4; 3,3,3 -> 7; 4,4 -> 9.5.
    Head: 4 + 7 + 7 + 9.5 + 9.5 = 37; U = 37 - 15 = 22. Ties: (8-2)+(27-3)+(27-3)+(8-2) = 60;
    var = 25/12 x (11 - 60/90)."""
    test = mann_whitney([1, 1, 2, 2, 3], [2, 3, 3, 4, 4])
    z = (22 - 12.5) / math.sqrt(25 / 12 * (11 - 60 / 90))
    assert test is not None and test.z == pytest.approx(z)
    assert test.p_value == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))


def test_mann_whitney_all_equal_and_too_few() -> None:
    equal = mann_whitney([2.0] * 5, [2.0] * 7)
    assert equal is not None and (equal.z, equal.p_value) == (0.0, 1.0)
    assert mann_whitney([1, 2, 3, 4], [1, 2, 3, 4, 5]) is None


def test_a_clear_latency_regression_flags_the_comparison() -> None:
    base = [run(i, latency_ms=300.0 + i) for i in range(20)]
    head = [run(i, "h", latency_ms=2_000.0 + i) for i in range(20)]
    result = scoring.compare(base, head)
    assert result.axes["latency"].verdict == "regressed" and result.regressed
    assert result.axes["correctness"].verdict == "unchanged"
    assert result.axes["robustness"].verdict == "unchanged"  # 100 -> 100
    assert result.base.runs_counted == result.head.runs_counted == 20
    assert result.base.composite_score is not None and result.head.composite_score is not None
    assert result.composite.delta == round(
        result.head.composite_score - result.base.composite_score, 2
    )


def test_a_side_without_runs_has_no_evidence() -> None:
    result = scoring.compare([], [run(i, "h") for i in range(6)])
    assert {change.verdict for change in result.axes.values()} == {"insufficient_evidence"}
    assert result.base.composite_score is None and result.base.success_rate is None
    assert [task.change for task in result.tasks] == ["new", "new", "new"]
    assert not result.regressed


def opposite(verdict: str) -> str:
    return {"improved": "regressed", "regressed": "improved"}.get(verdict, verdict)


runs_strategy = st.lists(
    st.builds(
        dict,
        success=st.one_of(st.none(), st.booleans()),
        latency_ms=st.one_of(st.none(), st.sampled_from([100.0, 400.0, 900.0, 2500.0])),
        cost_usd=st.one_of(st.none(), st.sampled_from([0.001, 0.02, 0.05])),
        steps=st.one_of(st.none(), st.integers(0, 9)),
        task=st.integers(0, 3),
        status=st.sampled_from(["completed", "completed", "failed", "timeout", "running"]),
    ),
    max_size=40,
)


def records(raw: list[dict[str, Any]], side: str) -> list[scoring.RunRecord]:
    return [
        run(i, side, task_id=f"t{r.pop('task')}", **r) for i, r in enumerate(dict(x) for x in raw)
    ]


@settings(max_examples=150, deadline=None)
@given(runs_strategy, runs_strategy)
def test_swapping_sides_flips_verdicts_and_keeps_p_values(
    base: list[dict[str, Any]], head: list[dict[str, Any]]
) -> None:
    forward = scoring.compare(records(base, "b"), records(head, "h"))
    backward = scoring.compare(records(head, "h"), records(base, "b"))
    for axis in scoring.policy.RADAR_AXES:
        there, back = forward.axes[axis], backward.axes[axis]
        assert back.verdict == opposite(there.verdict), axis
        assert back.p_value == there.p_value, axis
        assert (back.base, back.head) == (there.head, there.base)


@settings(max_examples=100, deadline=None)
@given(runs_strategy, runs_strategy, st.randoms(use_true_random=False))
def test_the_order_of_the_runs_changes_nothing(
    base: list[dict[str, Any]], head: list[dict[str, Any]], rnd: random.Random
) -> None:
    b, h = records(base, "b"), records(head, "h")
    expected = scoring.compare(b, h)
    rnd.shuffle(b)
    rnd.shuffle(h)
    assert scoring.compare(b, h) == expected


def test_only_each_sides_latest_hundred_terminal_runs_are_tested() -> None:
    old_failures = [run(i, success=False, ended_at=START) for i in range(50)]
    recent = [run(i + 100, ended_at=START + timedelta(days=1, minutes=i)) for i in range(100)]
    result = scoring.compare(old_failures + recent, [replace(r, id="h" + r.id) for r in recent])
    assert result.base.runs_counted == 100
    assert result.axes["correctness"].base == 100.0
    assert result.axes["correctness"].verdict == "unchanged"

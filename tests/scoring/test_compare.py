"""Compare (docs/loop.md "Compare", revision 2): the specification's vectors,
the choice of test, and properties that hold for any runs. The tests
themselves are checked by hand in test_stats.py."""

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


def reported(change: scoring.AxisChange) -> dict[str, Any]:
    """The fields docs/loop.md specifies for an axis (the evidence beside them is ours)."""
    fields = asdict(change)
    return {key: fields[key] for key in SPECIFIED_AXIS_FIELDS}


SPECIFIED_AXIS_FIELDS = (
    "base",
    "head",
    "delta",
    "verdict",
    "test",
    "paired_tasks",
    "p_value",
    "p_adjusted",
)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_every_specified_vector_is_reproduced(vector: dict[str, Any]) -> None:
    result = scoring.compare(
        [to_run(r) for r in vector["base"]], [to_run(r) for r in vector["head"]]
    )
    got = {
        "axes": {axis: reported(change) for axis, change in result.axes.items()},
        "composite": asdict(result.composite),
        "tasks": [asdict(task) for task in result.tasks],
        "regressed": result.regressed,
    }
    assert got == vector["expected"]


def test_a_clear_latency_regression_on_ten_tasks_is_found_paired() -> None:
    base = [run(i, latency_ms=300.0 + i, task_id=f"t{i % 10}") for i in range(20)]
    head = [run(i, "h", latency_ms=2_000.0 + i, task_id=f"t{i % 10}") for i in range(20)]
    result = scoring.compare(base, head)
    latency = result.axes["latency"]
    assert (latency.verdict, latency.test, latency.paired_tasks) == (
        "regressed",
        "wilcoxon_signed_rank",
        10,
    )
    assert result.regressed
    assert [pair.task_id for pair in latency.pairs] == [f"t{i}" for i in range(10)]
    assert all(pair.delta == 1_700.0 for pair in latency.pairs)
    assert result.axes["correctness"].verdict == "unchanged"
    assert result.axes["robustness"].verdict == "unchanged"  # 100 -> 100, every d = 0
    assert result.base.runs_counted == result.head.runs_counted == 20
    assert result.base.composite_score is not None and result.head.composite_score is not None
    assert result.composite.delta == round(
        result.head.composite_score - result.base.composite_score, 2
    )


def test_five_paired_tasks_alone_cannot_flag_an_axis_under_holm() -> None:
    """Five equal d > 0: W = 15, mean 7.5, var = 13.75 - (125 - 5)/48 = 11.25, p = 0.0253,
    the smallest five pairs can give; with five axes tested Holm multiplies it by 5.
    A team needs more tasks (or rounds on more tasks) to gate on one axis."""
    base = [run(i, latency_ms=300.0, task_id=f"t{i % 5}") for i in range(10)]
    head = [run(i, "h", latency_ms=900.0, task_id=f"t{i % 5}") for i in range(10)]
    latency = scoring.compare(base, head).axes["latency"]
    raw = math.erfc(7.5 / math.sqrt(11.25) / math.sqrt(2))
    assert latency.p_value == round(raw, 6)
    assert latency.p_adjusted == round(5 * raw, 6)  # Holm on the unrounded p
    assert latency.verdict == "unchanged"
    assert latency.test == "wilcoxon_signed_rank" and latency.paired_tasks == 5


def test_an_axis_without_a_verdict_says_what_is_missing() -> None:
    base = [run(i, task_id=f"t{i % 4}") for i in range(4)]
    head = [run(i, "h", task_id=f"t{i % 4}") for i in range(8)]
    result = scoring.compare(base, head)
    latency, robustness = result.axes["latency"], result.axes["robustness"]
    assert latency.verdict == robustness.verdict == "insufficient_evidence"
    assert latency.needed == (
        "4 paired tasks, need 5; unpaired: 4 / 8 values on base / head, need 5 each"
    )
    assert robustness.needed == "0 paired tasks, need 5" and robustness.test is None


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
        task=st.integers(0, 7),
        status=st.sampled_from(["completed", "completed", "failed", "timeout", "running"]),
    ),
    max_size=60,
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
        assert (back.test, back.paired_tasks) == (there.test, there.paired_tasks), axis
        assert back.p_value == pytest.approx(there.p_value, abs=2e-6), axis
        assert back.p_adjusted == pytest.approx(there.p_adjusted, abs=2e-6), axis
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


@settings(max_examples=100, deadline=None)
@given(runs_strategy, runs_strategy, st.permutations(range(8)))
def test_relabelling_the_tasks_changes_no_axis(
    base: list[dict[str, Any]], head: list[dict[str, Any]], labels: list[int]
) -> None:
    """Task ids are names: renaming them (consistently on both sides) moves no verdict."""

    def renamed(runs: list[scoring.RunRecord]) -> list[scoring.RunRecord]:
        return [replace(r, task_id=f"task-{labels[int(r.task_id[1:])]}") for r in runs]

    b, h = records(base, "b"), records(head, "h")
    before, after = scoring.compare(b, h), scoring.compare(renamed(b), renamed(h))
    assert {a: reported(c) for a, c in after.axes.items()} == {
        a: reported(c) for a, c in before.axes.items()
    }
    assert after.regressed == before.regressed


@settings(max_examples=100, deadline=None)
@given(runs_strategy, runs_strategy)
def test_holm_never_reports_an_axis_below_its_raw_p_value(
    base: list[dict[str, Any]], head: list[dict[str, Any]]
) -> None:
    for change in scoring.compare(records(base, "b"), records(head, "h")).axes.values():
        assert (change.p_value is None) == (change.p_adjusted is None)
        if change.p_value is not None and change.p_adjusted is not None:
            assert change.p_value <= change.p_adjusted <= 1.0
        if change.verdict in ("regressed", "improved"):
            assert change.p_adjusted is not None and change.p_adjusted < 0.05


def test_only_each_sides_latest_hundred_terminal_runs_are_tested() -> None:
    old_failures = [run(i, success=False, ended_at=START) for i in range(50)]
    recent = [run(i + 100, ended_at=START + timedelta(days=1, minutes=i)) for i in range(100)]
    result = scoring.compare(old_failures + recent, [replace(r, id="h" + r.id) for r in recent])
    assert result.base.runs_counted == 100
    assert result.axes["correctness"].base == 100.0
    assert result.axes["correctness"].verdict == "unchanged"


def test_a_significant_change_smaller_than_min_effect_is_unchanged() -> None:
    """Latency p50 600 -> 620 ms on ten tasks: paired, significant, the axis
    98.0 -> 97.6 (delta -0.4). `regressed` at min_effect 0 and 0.4, `unchanged`
    above; the p-values never move (docs/loop.md "Small changes")."""
    base = [run(i, latency_ms=600.0 + i % 10, task_id=f"t{i % 10}") for i in range(30)]
    head = [run(i, "h", latency_ms=620.0 + i % 10, task_id=f"t{i % 10}") for i in range(30)]
    plain = scoring.compare(base, head)
    assert plain.axes["latency"].delta == -0.4 and plain.axes["latency"].verdict == "regressed"
    assert scoring.compare(base, head, min_effect=0.4).axes["latency"].verdict == "regressed"
    gated = scoring.compare(base, head, min_effect=0.41)
    assert gated.axes["latency"].verdict == "unchanged" and not gated.regressed
    assert replace(gated.axes["latency"], verdict="regressed") == plain.axes["latency"]
    # an improvement is held to the same bar
    back = scoring.compare(head, base, min_effect=1.0)
    assert back.axes["latency"].verdict == "unchanged"
    assert scoring.compare(head, base).axes["latency"].verdict == "improved"


def test_min_effect_leaves_insufficient_evidence_and_the_vectors_alone() -> None:
    for vector in VECTORS:
        base = [to_run(r) for r in vector["base"]]
        head = [to_run(r) for r in vector["head"]]
        default, zero = scoring.compare(base, head), scoring.compare(base, head, min_effect=0)
        assert default == zero
        huge = scoring.compare(base, head, min_effect=1000)
        for axis, change in huge.axes.items():
            expected = default.axes[axis].verdict
            if expected in ("regressed", "improved"):
                expected = "unchanged"
            assert change.verdict == expected
        assert huge.regressed is False


@pytest.mark.parametrize("bad", [-0.01, math.inf, -math.inf, math.nan])
def test_min_effect_must_be_a_finite_number_of_points_at_least_zero(bad: float) -> None:
    with pytest.raises(ValueError, match="min_effect must be a finite number >= 0"):
        scoring.compare([run(0)], [run(0, "h")], min_effect=bad)

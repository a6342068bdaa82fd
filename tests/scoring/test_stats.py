"""The tests compare relies on (docs/loop.md "Compare"), computed by hand,
and the properties that make Holm's correction safe to gate on."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.stats import (
    NO_CHANGE,
    Stratum,
    cochran_mantel_haenszel,
    holm,
    mann_whitney,
    two_proportions,
    wilcoxon_signed_rank,
)


def p_of(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2))


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


def test_wilcoxon_by_hand_without_ties() -> None:
    """d = 1 -2 3 4 5: ranks of |d| 1..5, W = 1 + 3 + 4 + 5 = 13; mean 7.5; var 5x6x11/24."""
    test = wilcoxon_signed_rank([1.0, -2.0, 3.0, 4.0, 5.0])
    z = (13 - 7.5) / math.sqrt(13.75)
    assert test.z == pytest.approx(z) and test.p_value == pytest.approx(p_of(z))


def test_wilcoxon_by_hand_drops_zeros_and_averages_tied_ranks() -> None:
    """d = 0 1 -1 2 2 0: n' = 4; |d| 1 1 2 2 ranked 1.5 1.5 3.5 3.5; W = 1.5 + 3.5 + 3.5
    = 8.5; mean 5; var = 4x5x9/24 - (6 + 6)/48 = 7.25."""
    test = wilcoxon_signed_rank([0.0, 1.0, -1.0, 2.0, 2.0, 0.0])
    z = (8.5 - 5) / math.sqrt(7.25)
    assert test.z == pytest.approx(z) and test.p_value == pytest.approx(p_of(z))


def test_wilcoxon_with_every_task_unmoved_is_no_change() -> None:
    assert wilcoxon_signed_rank([0.0] * 7) == NO_CHANGE
    assert wilcoxon_signed_rank([]) == NO_CHANGE


def test_cmh_by_hand() -> None:
    """Task A: 3/3 then 1/3 (N 6, m 4, E = 3x4/6 = 2, V = 3x3x4x2/(36x5) = 0.4);
    task B: 1/2 then 1/2 (N 4, m 2, E 1, V = 2x2x2x2/(16x3) = 1/3).
    z = ((1 - 2) + (1 - 1)) / sqrt(0.4 + 1/3)."""
    test = cochran_mantel_haenszel([Stratum(3, 3, 3, 1), Stratum(2, 1, 2, 1)])
    z = -1 / math.sqrt(0.4 + 1 / 3)
    assert test.z == pytest.approx(z) and test.p_value == pytest.approx(p_of(z))


def test_cmh_ignores_tasks_that_never_vary() -> None:
    """Always-passing and always-failing tasks have V = 0 and E = x2: they add
    nothing, so the broken task alone decides z."""
    broken = Stratum(5, 5, 5, 1)
    alone = cochran_mantel_haenszel([broken])
    steady = [Stratum(5, 5, 5, 5)] * 8 + [Stratum(5, 0, 5, 0)] * 2
    assert cochran_mantel_haenszel([broken, *steady]) == alone
    assert cochran_mantel_haenszel(steady) == NO_CHANGE


def test_holm_by_hand() -> None:
    """0.01 0.04 0.03 sorted: 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; max(0.06, 1 x 0.04) = 0.06."""
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.02, 0.02]) == pytest.approx([0.04, 0.04])
    assert holm([0.6, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


p_values = st.lists(st.floats(0.0, 1.0), max_size=8)


@given(p_values)
def test_holm_never_lowers_a_p_value_and_keeps_their_order(raw: list[float]) -> None:
    adjusted = holm(raw)
    assert all(p <= a <= 1.0 for p, a in zip(raw, adjusted, strict=True))
    ranked = sorted(zip(raw, adjusted, strict=True))
    assert all(a <= b for (_, a), (_, b) in zip(ranked, ranked[1:], strict=False))


differences = st.lists(
    st.sampled_from([-3.5, -2.0, -1.0, -0.25, 0.0, 0.25, 1.0, 2.0, 3.5]), max_size=30
)


@given(differences)
def test_wilcoxon_of_negated_differences_flips_z_and_keeps_p(d: list[float]) -> None:
    forward, backward = wilcoxon_signed_rank(d), wilcoxon_signed_rank([-x for x in d])
    assert backward.z == pytest.approx(-forward.z, abs=1e-12)
    assert backward.p_value == pytest.approx(forward.p_value, abs=1e-12)


@given(
    st.lists(
        st.tuples(st.integers(1, 6), st.integers(0, 6), st.integers(1, 6), st.integers(0, 6)),
        max_size=12,
    )
)
def test_cmh_of_swapped_sides_flips_z_and_keeps_p(
    tables: list[tuple[int, int, int, int]],
) -> None:
    rows = [Stratum(n1, min(x1, n1), n2, min(x2, n2)) for n1, x1, n2, x2 in tables]
    swapped = [Stratum(s.head_n, s.head_successes, s.base_n, s.base_successes) for s in rows]
    forward, backward = cochran_mantel_haenszel(rows), cochran_mantel_haenszel(swapped)
    assert backward.z == pytest.approx(-forward.z, abs=1e-9)
    assert backward.p_value == pytest.approx(forward.p_value, abs=1e-12)

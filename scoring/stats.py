"""Two-sided tests for compare: did head differ from base beyond noise?
(docs/loop.md "Compare", revision 2)

Pure functions on plain numbers. Unpaired: `two_proportions` (the pooled
z-test for a pass rate) and `mann_whitney` (the U test). Paired by task:
`cochran_mantel_haenszel` (pass rates stratified by task) and
`wilcoxon_signed_rank` (one difference per task). All use the normal
approximation without continuity correction and return the z statistic
(head relative to base) with the two-sided p-value erfc(|z|/sqrt 2).
`holm` corrects a family of p-values (the axes) for being judged together.

Ranks are averaged over ties and the variances carry the tie correction,
so a rank test never claims more certainty than tied values give it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scoring import policy


@dataclass(frozen=True, slots=True)
class Test:
    """z > 0: head above base (more passes, or larger values); p in [0, 1]."""

    z: float
    p_value: float


NO_CHANGE = Test(0.0, 1.0)  # no variation at all: nothing to test


@dataclass(frozen=True, slots=True)
class Stratum:
    """One task's known outcomes on each side (a 2x2 table of the CMH test)."""

    base_n: int
    base_successes: int
    head_n: int
    head_successes: int


def p_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


def two_proportions(base_passes: int, base_n: int, head_passes: int, head_n: int) -> Test | None:
    """Pooled two-proportion z-test; None below the minimum on either side."""
    if min(base_n, head_n) < policy.COMPARE_MIN_VALUES:
        return None
    pooled = (base_passes + head_passes) / (base_n + head_n)
    if pooled in (0.0, 1.0):
        return NO_CHANGE
    spread = math.sqrt(pooled * (1.0 - pooled) * (1.0 / base_n + 1.0 / head_n))
    z = (head_passes / head_n - base_passes / base_n) / spread
    return Test(z, p_two_sided(z))


def mann_whitney(base: Sequence[float], head: Sequence[float]) -> Test | None:
    """Mann-Whitney U of head against base; None below the minimum on either side."""
    n1, n2 = len(base), len(head)
    if min(n1, n2) < policy.COMPARE_MIN_VALUES:
        return None
    labelled = sorted([(v, 0) for v in base] + [(v, 1) for v in head])
    ranks, tie_term = _average_ranks([v for v, _ in labelled])
    head_ranks = math.fsum(rank for rank, (_, side) in zip(ranks, labelled, strict=True) if side)
    n = n1 + n2
    u_head = head_ranks - n2 * (n2 + 1) / 2.0
    mean = n1 * n2 / 2.0
    variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0.0:
        return NO_CHANGE  # every value equal
    z = (u_head - mean) / math.sqrt(variance)
    return Test(z, p_two_sided(z))


def wilcoxon_signed_rank(differences: Sequence[float]) -> Test:
    """Wilcoxon signed-rank on per-task differences d = head - base.

    Zeros are dropped (a task that did not move says nothing about the
    direction); W is the sum of the ranks of |d| over the positive d. The
    caller rounds d first, so differences equal in exact arithmetic tie.
    """
    moved = sorted(abs(d) for d in differences if d != 0.0)
    n = len(moved)
    if n == 0:
        return NO_CHANGE
    ranks, tie_term = _average_ranks(moved)
    rank_of = dict(zip(moved, ranks, strict=True))  # equal |d| share one average rank
    w = math.fsum(rank_of[abs(d)] for d in differences if d > 0.0)
    mean = n * (n + 1) / 4.0
    # Never 0 once one d is left: all n equal gives n(n+1)(3n+3)/48 > 0, so
    # the spec's "var = 0: unchanged" cannot arise here.
    variance = n * (n + 1) * (2 * n + 1) / 24.0 - tie_term / 48.0
    z = (w - mean) / math.sqrt(variance)
    return Test(z, p_two_sided(z))


def cochran_mantel_haenszel(strata: Sequence[Stratum]) -> Test:
    """Head's successes against what each task's table expects, summed over tasks.

    A task that always passes (or always fails) on both sides has no
    variance and adds nothing, so a regression confined to a few tasks is
    not drowned by the tasks that never move. Every stratum needs N >= 2.
    """
    excess: list[float] = []
    variances: list[float] = []
    for s in strata:
        total = s.base_n + s.head_n
        successes = s.base_successes + s.head_successes
        excess.append(s.head_successes - s.head_n * successes / total)
        variances.append(
            s.base_n * s.head_n * successes * (total - successes) / (total * total * (total - 1))
        )
    variance = math.fsum(variances)
    if variance <= 0.0:
        return NO_CHANGE
    z = math.fsum(excess) / math.sqrt(variance)
    return Test(z, p_two_sided(z))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given (ties keep that order).

    The i-th smallest gets min(1, max over j <= i of (m - j + 1) p_(j)); the
    running max keeps the adjusted values in the order of the raw ones, and
    no adjusted value is below its raw one.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _average_ranks(ordered: Sequence[float]) -> tuple[list[float], float]:
    """1-based ranks of sorted values, ties sharing their average rank, and
    the tie term sum(t^3 - t) over the groups of equal values."""
    ranks: list[float] = []
    tie_term = 0.0
    start, n = 0, len(ordered)
    while start < n:
        end = start
        while end + 1 < n and ordered[end + 1] == ordered[start]:
            end += 1
        size = end - start + 1
        ranks.extend([(start + end) / 2.0 + 1.0] * size)
        tie_term += size**3 - size
        start = end + 1
    return ranks, tie_term

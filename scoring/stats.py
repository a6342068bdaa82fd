"""Two-sided tests for compare: did head differ from base beyond noise?

Pure functions on plain numbers. `two_proportions` is the pooled z-test for
a pass rate; `mann_whitney` is the U test with ranks averaged over ties and
the tie-corrected variance, without continuity correction. Both return the
z statistic (head relative to base) and the two-sided p-value erfc(|z|/√2);
None when a side has too few values to be evidence.
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


def p_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2.0))


def two_proportions(base_passes: int, base_n: int, head_passes: int, head_n: int) -> Test | None:
    """Pooled two-proportion z-test; None below the minimum on either side."""
    if min(base_n, head_n) < policy.COMPARE_MIN_VALUES:
        return None
    pooled = (base_passes + head_passes) / (base_n + head_n)
    if pooled in (0.0, 1.0):
        return Test(0.0, 1.0)  # no variation at all: nothing changed
    spread = math.sqrt(pooled * (1.0 - pooled) * (1.0 / base_n + 1.0 / head_n))
    z = (head_passes / head_n - base_passes / base_n) / spread
    return Test(z, p_two_sided(z))


def mann_whitney(base: Sequence[float], head: Sequence[float]) -> Test | None:
    """Mann-Whitney U of head against base; None below the minimum on either side."""
    n1, n2 = len(base), len(head)
    if min(n1, n2) < policy.COMPARE_MIN_VALUES:
        return None
    labelled = sorted([(v, 0) for v in base] + [(v, 1) for v in head])
    n = n1 + n2
    head_ranks = 0.0
    tie_term = 0.0
    start = 0
    while start < n:  # one group of equal values at a time: they share the average rank
        end = start
        while end + 1 < n and labelled[end + 1][0] == labelled[start][0]:
            end += 1
        size = end - start + 1
        average = (start + end) / 2.0 + 1.0
        head_ranks += average * sum(side for _, side in labelled[start : end + 1])
        tie_term += size**3 - size
        start = end + 1
    u_head = head_ranks - n2 * (n2 + 1) / 2.0
    mean = n1 * n2 / 2.0
    variance = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1)))
    if variance <= 0.0:
        return Test(0.0, 1.0)  # every value equal
    z = (u_head - mean) / math.sqrt(variance)
    return Test(z, p_two_sided(z))

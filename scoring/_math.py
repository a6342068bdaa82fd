"""Order-independent arithmetic helpers shared by the three views."""

from __future__ import annotations

import math
from collections.abc import Sequence


def mean(values: Sequence[float]) -> float:
    """Mean with `math.fsum`, so the order of the runs never moves a result."""
    return math.fsum(values) / len(values)


def median(values: Sequence[float]) -> float:
    """Statistical median: mean of the two middle values for an even count."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def clamp(value: float, low: float = 0.0, high: float = 100.0) -> float:
    return max(low, min(high, value))


def piecewise_linear(x: float, anchors: Sequence[tuple[float, float]]) -> float:
    """Interpolate between anchors; flat beyond the first and last anchor."""
    first_x, first_y = anchors[0]
    if x <= first_x:
        return first_y
    for (x0, y0), (x1, y1) in zip(anchors, anchors[1:], strict=False):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return anchors[-1][1]


def consistency(pass_rate: float) -> float:
    """1 - 4p(1-p): 1 when always or never passing, 0 at a coin flip."""
    return 1.0 - 4.0 * pass_rate * (1.0 - pass_rate)

"""Viewer weights for the radar: parsing and validation (docs/scoring.md "The fitness radar")."""

from __future__ import annotations

import math
from collections.abc import Mapping

from scoring import policy


def parse_weights(text: str) -> dict[str, float]:
    """Parse "correctness:2,latency:1"; raise ValueError with a readable reason."""
    weights: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition(":")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"weight {part.strip()!r} is not of the form axis:number")
        if name in weights:
            raise ValueError(f"axis {name!r} is given twice")
        try:
            weights[name] = float(value)
        except ValueError:
            raise ValueError(f"weight of {name!r} is not a number: {value.strip()!r}") from None
    return validate_weights(weights)


def validate_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Known axes, finite, non-negative; unnamed axes get 0."""
    unknown = sorted(set(weights) - set(policy.RADAR_AXES))
    if unknown:
        raise ValueError(f"unknown axis {', '.join(unknown)}; axes: {', '.join(policy.RADAR_AXES)}")
    checked = dict.fromkeys(policy.RADAR_AXES, 0.0)
    for name, value in weights.items():
        number = float(value)
        if not math.isfinite(number) or number < 0:
            raise ValueError(f"weight of {name!r} must be a finite number >= 0, not {value!r}")
        checked[name] = number
    return checked

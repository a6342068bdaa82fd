"""Run cost (docs/runs.md "The fields of a run"): reported wins, else the estimate.

A run's cost is at most MAX_COST_USD however it was found: each reported
cost is already (collector.assembly.facts.as_cost), and a sum of them or an
estimate from 2^63-1 tokens is cut there too, so an agent's kept sum over
its runs stays finite (facts.MAX_COST_USD says why).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from collector.assembly.facts import MAX_COST_USD
from scoring import policy


def estimate_usd(input_tokens: int | None, output_tokens: int | None) -> float:
    """The reference price; it lives next to the scoring policy constants."""
    return (
        (input_tokens or 0) * policy.REFERENCE_INPUT_USD_PER_MTOK
        + (output_tokens or 0) * policy.REFERENCE_OUTPUT_USD_PER_MTOK
    ) / 1_000_000


class LlmCost(NamedTuple):
    """What one counted LLM call says about its own cost (one per LLM call)."""

    reported: float | None
    input_tokens: int | None
    output_tokens: int | None


def run_cost(
    root_reported: float | None,
    calls: Sequence[LlmCost],
    input_tokens: int | None,
    output_tokens: int | None,
) -> tuple[float | None, str | None]:
    if root_reported is not None:
        return min(root_reported, MAX_COST_USD), "reported"
    reported = [call.reported for call in calls if call.reported is not None]
    if reported:
        rest = [call for call in calls if call.reported is None]
        priced = [c for c in rest if c.input_tokens is not None or c.output_tokens is not None]
        extra = math.fsum(estimate_usd(c.input_tokens, c.output_tokens) for c in priced)
        total = math.fsum(reported) + extra
        return min(total, MAX_COST_USD), "mixed" if priced else "reported"
    if input_tokens is None and output_tokens is None:
        return None, None
    return min(estimate_usd(input_tokens, output_tokens), MAX_COST_USD), "estimated"

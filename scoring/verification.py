"""How much of a score the screening side observed (docs/loop.md "Graded
outcomes and verified_state"): a score an agent reports about itself is
weaker evidence than one whose outcomes were graded."""

from __future__ import annotations

from typing import Literal

VerifiedState = Literal["verified", "partial", "self_reported"]


def verified_state(completed_runs: int, graded_runs: int) -> VerifiedState | None:
    """`verified` when every completed run is graded, `partial` when some
    are, `self_reported` when none are; None without a completed run."""
    if completed_runs <= 0:
        return None
    if graded_runs <= 0:
        return "self_reported"
    return "verified" if graded_runs >= completed_runs else "partial"

"""docs/loop.md "Graded outcomes and verified_state": how much was observed."""

from __future__ import annotations

import pytest

import scoring


@pytest.mark.parametrize(
    ("completed", "graded", "state"),
    [
        (0, 0, None),
        (3, 0, "self_reported"),
        (3, 1, "partial"),
        (3, 2, "partial"),
        (3, 3, "verified"),
        (1, 1, "verified"),
    ],
)
def test_verified_state_follows_the_share_of_graded_completed_runs(
    completed: int, graded: int, state: str | None
) -> None:
    assert scoring.verified_state(completed, graded) == state

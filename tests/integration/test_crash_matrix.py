"""A few crash trials per CI run (bench/crash.py runs the matrix of 20):
SIGKILL during load, a retention pass, a migration and grade writes, on
each database; nothing acknowledged is lost and runs match spans after restart."""

from __future__ import annotations

import random

import pytest

from bench.support.crashes import KINDS, run_trial

pytestmark = pytest.mark.timing  # make flake runs these beside a CPU hog


@pytest.mark.parametrize("kind", KINDS)
def test_a_sigkill_loses_nothing_acknowledged_and_runs_match_spans_after_restart(
    database_url: str, kind: str
) -> None:
    seed = random.randrange(2**31)
    trial = run_trial(kind, database_url, random.Random(seed))
    assert trial.acked_spans > 0
    assert (trial.lost_spans, trial.lost_grades) == (0, 0), (seed, trial)
    assert trial.runs_consistent_after_s is not None, (seed, trial)
    assert trial.integrity == "ok" and trial.restarted, (seed, trial)
    if kind == "grade":
        assert trial.acked_grades > 0

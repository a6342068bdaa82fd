"""Repeatability pass^k (docs/scoring.md "pass^k"): will it do that again?"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from math import comb

from scoring import policy
from scoring._math import mean
from scoring.types import Repeatability, RunRecord, TaskRepeatability


def pass_hat_k(n: int, successes: int, k: int) -> float:
    """C(c, k) / C(n, k): the chance that k draws without replacement all pass."""
    if successes < k:
        return 0.0
    return comb(successes, k) / comb(n, k)


def pass_k(runs: Iterable[RunRecord]) -> Repeatability:
    """Per-task pass^1/3/5 for tasks with enough known outcomes, and their mean."""
    outcomes: dict[str, list[bool]] = defaultdict(list)
    for run in runs:
        known = run.success is not None and run.task_id is not None
        if run.status in policy.TERMINAL_STATUSES and known:
            outcomes[str(run.task_id)].append(bool(run.success))
    return pass_k_from_counts(
        {task_id: (len(results), sum(results)) for task_id, results in outcomes.items()}
    )


def pass_k_from_counts(counts: Mapping[str, tuple[int, int]]) -> Repeatability:
    """pass^k from (known outcomes, successes) per task, e.g. aggregated in SQL.

    `pass_k()` goes through here too, which keeps the two equal.
    """
    tasks = tuple(
        _task(task_id, n, c)
        for task_id, (n, c) in sorted(counts.items())
        if n >= policy.PASS_K_MIN_OUTCOMES
    )
    if not tasks:
        return Repeatability(None, None, None, 0, ())
    return Repeatability(
        pass_1=mean([t.pass_1 for t in tasks]),
        pass_3=mean([t.pass_3 for t in tasks]),
        pass_5=mean([t.pass_5 for t in tasks]),
        tasks_counted=len(tasks),
        tasks=tasks,
    )


def _task(task_id: str, n: int, c: int) -> TaskRepeatability:
    one, three, five = (pass_hat_k(n, c, k) for k in policy.PASS_K_LEVELS)
    return TaskRepeatability(task_id, n, c, one, three, five)

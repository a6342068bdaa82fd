"""Per-agent sums and what scoring makes of them.

The sums come from the kept totals (storage.kept_totals) or, for a view with
a time window, from one scan of the agent's runs in it (`TOTALS`); either
way they have one shape, and these helpers read it.
"""

from __future__ import annotations

import math
from typing import Any

from sqlalchemy import case, func, select

import scoring
from api.ports import RunCounts, RunFilter
from collector.storage.tables import runs

Totals = dict[tuple[str, str | None], tuple[Any, ...]]  # (status, cost source) -> sums

# Per (agent, status, cost source): the sums scoring needs (the covering index).
TOTALS = select(
    runs.c.agent_id,
    runs.c.status,
    runs.c.cost_source,
    func.count(),
    func.sum(case((runs.c.success.is_(True), 1), else_=0)),
    func.sum(runs.c.latency_ms),
    func.count(runs.c.latency_ms),
    func.sum(func.coalesce(runs.c.cost_usd, 0.0)),
)


def conditions(where: RunFilter) -> list[Any]:
    """The filter as SQL conditions (nothing for every run)."""
    found: list[Any] = []
    if where.null_version:
        found.append(runs.c.version.is_(None))
    elif where.version is not None:
        found.append(runs.c.version == where.version)
    if where.since is not None:
        found.append(runs.c.terminal_at >= where.since)
    if where.until is not None:
        found.append(runs.c.terminal_at < where.until)
    if where.screening is not None:
        found.append(runs.c.screening_id == where.screening)
    return found


def counts_of(totals: Totals) -> RunCounts:
    """Runs by status, and the cost source of the completed ones."""

    def count(status: str, index: int = 0) -> int:
        return sum(int(v[index] or 0) for (s, _), v in totals.items() if s == status)

    sources = {src for (s, src) in totals if s == "completed" and src is not None}
    source = None
    if sources:
        source = sources.pop() if len(sources) == 1 else "mixed"
    return RunCounts(
        total=sum(int(v[0]) for v in totals.values()),
        completed=count("completed"),
        successful=count("completed", 1),
        failed=count("failed"),
        timeout=count("timeout"),
        running=count("running"),
        cost_source=source,
    )


def composite_of(totals: Totals) -> scoring.Composite | None:
    """The composite from the completed runs' sums (docs/scoring.md)."""
    completed = [v for (s, _), v in totals.items() if s == "completed"]
    count = sum(int(v[0]) for v in completed)
    if not count:
        return None
    return scoring.composite_from_aggregates(
        completed_runs=count,
        successful_runs=sum(int(v[1] or 0) for v in completed),
        latency_sum_ms=math.fsum(float(v[2] or 0.0) for v in completed),
        latency_count=sum(int(v[3]) for v in completed),
        cost_sum_usd=math.fsum(float(v[4] or 0.0) for v in completed),
    )

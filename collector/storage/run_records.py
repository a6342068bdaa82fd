"""A `runs` row as the scoring core's record (the one converter), and the
query of an agent's radar cohort, which the read store and the kept board
both read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

import scoring
from api.ports import ALL_RUNS, RunFilter
from collector.storage.tables import runs
from collector.storage.totals import conditions
from scoring import policy

TERMINAL = tuple(sorted(policy.TERMINAL_STATUSES))


def cohort_rows(conn: Connection, agent_id: str, where: RunFilter = ALL_RUNS) -> list[Any]:
    """The latest terminal runs of an agent, newest first (docs/scoring.md)."""
    query = (
        select(runs)
        .where(
            runs.c.agent_id == agent_id,
            runs.c.status.in_(TERMINAL),
            # A terminal run always has terminal_at. Said, and with no NULLS
            # LAST, PostgreSQL reads (agent_id, terminal_at) backwards and
            # stops at 100 (54 -> 0.7 ms at 200k runs); it sorted them all.
            runs.c.terminal_at.is_not(None),
            *conditions(where),
        )
        .order_by(runs.c.terminal_at.desc(), runs.c.id.desc())
        .limit(policy.RADAR_COHORT_SIZE)
    )
    return list(conn.execute(query))


def record_of(r: Any) -> scoring.RunRecord:
    return scoring.RunRecord(
        id=r.id,
        status=r.status,
        success=r.success,
        latency_ms=r.latency_ms,
        cost_usd=r.cost_usd,
        steps=r.steps,
        task_id=r.task_id,
        # docs/runs.md "Delivery in any order": the collector's clock when the run became terminal.
        ended_at=datetime.fromtimestamp(r.terminal_at, UTC) if r.terminal_at else None,
    )

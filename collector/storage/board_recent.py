"""The agents that ran lately, read from the kept board (storage/board.py) for
the `/metrics` agent gauges (collector.agent_metrics).

One query, bounded by its LIMIT, over the board rows only: no run is read.
It selects only the columns the gauges show, as plain tuples: building the
leaderboard's `BoardRow` (its trend decoded from JSON) cost 10 ms of a
20 ms scrape for 1,000 agents.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.engine import Connection

from collector.storage.tables import agent_board, agents


class RecentAgent(NamedTuple):
    """An agent's board row as the gauges export it; the axes are named as in
    scoring.policy.RADAR_AXES (None: no evidence yet)."""

    agent_id: str
    owner: str
    name: str
    total_runs: int
    completed_runs: int
    graded_runs: int
    last_run_at: float
    composite_score: float | None
    correctness: float | None
    latency: float | None
    cost: float | None
    tool_efficiency: float | None
    robustness: float | None


def recent_agents(conn: Connection, *, since: float, limit: int) -> list[RecentAgent]:
    """The listed, live agents whose last run started at `since` or later,
    most recent first (agent id breaking ties), at most `limit`. By recency,
    not rank: an agent whose composite drops stays exported while it runs,
    so an alert on the drop sees it."""
    b = agent_board.c
    # NOT IN the (few) deleted agents, not IN the live ones as the board page
    # reads: on SQLite with 100,000 agents 26 ms instead of 210 (it built the
    # list of every live agent, then probed the board once per agent).
    deleted = select(agents.c.id).where(agents.c.deleted_at.is_not(None))
    query = (
        select(*(b[field] for field in RecentAgent._fields))
        .where(b.listed.is_(True), b.last_run_at >= since, b.agent_id.not_in(deleted))
        .order_by(b.last_run_at.desc(), b.agent_id)
        .limit(limit)
    )
    return [RecentAgent._make(row) for row in conn.execute(query)]

"""An agent's screenings and a screening's runs, read from `runs`
(docs/screening.md "Reading a screening").

A screening is the set of runs whose root named the same
`badge.screening.id`; nothing else is stored for it. One grouped scan of the
agent's screened runs (index ix_runs_agent_screening_terminal) gives the list
with each screening's composite; a screening's page reads its runs once.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from api.ports import ScreenedRun, ScreeningInfo
from collector.storage.run_records import record_of
from collector.storage.tables import runs
from collector.storage.totals import TOTALS, Totals, composite_of, counts_of

_PER_SCREENING = TOTALS.add_columns(
    runs.c.screening_id,
    func.max(runs.c.suite_name),
    func.max(runs.c.suite_digest),
    func.min(runs.c.version),
    func.max(runs.c.screening_round),
    func.min(runs.c.started_ns),
    func.max(runs.c.started_ns),
)


def screenings_of(conn: Connection, agent_id: str) -> list[ScreeningInfo]:
    """Every screening of the agent, newest first by its first run."""
    query = _PER_SCREENING.where(
        runs.c.agent_id == agent_id, runs.c.screening_id.is_not(None)
    ).group_by(runs.c.agent_id, runs.c.screening_id, runs.c.status, runs.c.cost_source)
    totals: dict[str, Totals] = defaultdict(dict)
    about: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in conn.execute(query):
        totals[row.screening_id][(row.status, row.cost_source)] = tuple(row[3:8])
        about[row.screening_id].append(tuple(row[9:]))
    found = []
    for screening, parts in about.items():
        suite, digest, version, rounds, first, last = _merged(parts)
        counts = counts_of(totals[screening])
        found.append(
            ScreeningInfo(
                screening_id=screening,
                suite_name=suite,
                suite_digest=digest,
                version=version,
                rounds=rounds,
                total_runs=counts.total,
                completed_runs=counts.completed,
                successful_runs=counts.successful,
                first_run_at=first / 1e9,
                last_run_at=last / 1e9,
                composite=composite_of(totals[screening]),
            )
        )
    found.sort(key=lambda s: (-s.first_run_at, s.screening_id))
    return found


def _merged(parts: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """One screening's groups (by status and cost source) as one: the
    suite and version its runs name, its last round, first and last start."""

    def known(index: int) -> list[Any]:
        return [part[index] for part in parts if part[index] is not None]

    return (
        max(known(0), default=None),
        max(known(1), default=None),
        min(known(2), default=None),
        max(known(3), default=None),
        min(known(4)),
        max(known(5)),
    )


def screened_runs(conn: Connection, agent_id: str, screening: str) -> list[ScreenedRun]:
    """Every run of one screening, with its round and error class."""
    query = select(runs).where(runs.c.agent_id == agent_id, runs.c.screening_id == screening)
    return [
        ScreenedRun(record_of(r), r.screening_round, r.error_class) for r in conn.execute(query)
    ]

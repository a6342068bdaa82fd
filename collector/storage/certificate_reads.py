"""`api.certificate_ports.CertificateReads` over the SQL tables.

What certificates and badges read besides the read store: an agent whether
or not it was soft-deleted (its certificates still answer, its badge says
`deleted`), its badge's figures from the kept board (storage/board.py: one
primary-key lookup, never a scan of runs), the agents of a screening id,
and a run's canonical spans.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import func, select

from api.certificate_ports import BadgeInfo, CanonicalSpans
from api.ports import AgentInfo, RunInfo
from api.problems import Unavailable
from collector.assembly.runs import Timers
from collector.storage.canonical_spans import canonical_spans
from collector.storage.engine import Database
from collector.storage.failures import is_unavailable
from collector.storage.tables import agents, runs

DOWN = "the database is not reachable; retry shortly"


@contextmanager
def answered() -> Iterator[None]:
    """A database outage is api.problems' Unavailable (503 + Retry-After)."""
    try:
        yield
    except Exception as exc:
        if is_unavailable(exc):
            raise Unavailable(DOWN) from None
        raise


class SqlCertificateReads:
    def __init__(self, db: Database, timers: Timers, clock: Callable[[], float]) -> None:
        self._db = db
        self._timers = timers
        self._clock = clock

    def agent_record(self, agent_id: str) -> AgentInfo | None:
        with answered(), self._db.reader.connect() as conn:
            row = conn.execute(select(agents).where(agents.c.id == agent_id)).first()
            if row is None:
                return None
            last_ns = conn.execute(
                select(func.max(runs.c.started_ns)).where(runs.c.agent_id == agent_id)
            ).scalar()
        return AgentInfo(
            id=row.id,
            owner=row.owner,
            name=row.name,
            first_seen_at=row.first_seen_at,
            last_run_at=last_ns / 1e9 if last_ns is not None else None,
            total_runs=None,
            listed=True,
            deleted_at=row.deleted_at,
        )

    def badge(self, agent_id: str) -> BadgeInfo | None:
        """Two primary-key lookups on the raw cursor (badges are fetched by
        every README view; Core's statement overhead was most of the cost)."""
        with answered(), self._db.reading() as session:
            cur = session.cursor()
            cur.execute(
                "SELECT a.name, a.deleted_at, b.composite_score, b.completed_runs, "
                "b.graded_runs FROM agents a LEFT JOIN agent_board b ON b.agent_id = a.id "
                f"WHERE a.id = {session.mark}",
                (agent_id,),
            )
            row = cur.fetchone()
        if row is None:
            return None
        name, deleted_at, composite, completed, graded = row
        return BadgeInfo(
            agent_id=agent_id,
            name=name,
            composite_score=composite,
            completed_runs=int(completed or 0),
            graded_runs=int(graded or 0),
            deleted=deleted_at is not None,
        )

    def screening_agents(self, screening_id: str) -> list[str]:
        """Through ix_runs_screening (screened runs only)."""
        query = select(runs.c.agent_id).where(runs.c.screening_id == screening_id).distinct()
        with answered(), self._db.reader.connect() as conn:
            return sorted(str(r[0]) for r in conn.execute(query))

    def canonical_spans(self, run: RunInfo) -> CanonicalSpans:
        with answered(), self._db.reading() as session:
            return canonical_spans(session, run, self._clock(), self._timers)

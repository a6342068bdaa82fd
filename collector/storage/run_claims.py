"""What the runs table says of grader's claims, read in the transaction that
writes runs (collector.runs.claims decides with it; docs/runs.md "Runs a
grader recorded").

Every read here goes through an index: stored runs by id, a screening's
runs by (agent, screening, grader_claim) (ix_runs_screening_claims), a
plan by its key. On PostgreSQL the stored runs read are held until the
transaction ends, so two processes writing the same run key in two traces
decide one after the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from sqlalchemy import false, select, true

from collector.storage.session import SqlSession, in_chunks
from collector.storage.tables import runs, screening_plans
from collector.types import TraceKey

Screening = tuple[str, str]  # (agent id, screening id)


class StoredClaim(NamedTuple):
    """A stored run, as far as who holds its key goes."""

    trace_id: str
    grader_claim: bool
    status: str
    terminal_at: float | None
    sealed: bool


def stored_claims(session: SqlSession, run_ids: Sequence[str]) -> dict[str, StoredClaim]:
    """The stored runs of these ids, locked for this transaction (PostgreSQL:
    `hold_runs` makes a concurrent writer of a new one wait, FOR UPDATE one of
    a stored one)."""
    if not run_ids:
        return {}
    ids = sorted(set(run_ids))
    session.hold_runs(ids)
    seqs = sorted(session.run_seqs(ids).values())
    found: dict[str, StoredClaim] = {}
    cur = session.cursor()
    for chunk in in_chunks(seqs):
        cur.execute(
            "SELECT id, trace_id, grader_claim, status, terminal_at, sealed_at FROM runs "
            f"WHERE seq IN ({session.marks(len(chunk))}) ORDER BY seq{session.for_update}",
            tuple(chunk),
        )
        for run_id, trace_id, claim, status, terminal_at, sealed_at in cur.fetchall():
            found[run_id] = StoredClaim(
                trace_id, bool(claim), status, terminal_at, sealed_at is not None
            )
    return found


def graders_screenings(session: SqlSession, wanted: Iterable[Screening]) -> set[Screening]:
    """Of these screenings, the ones a grader recorded: planned (a plan needs
    a grader key) or named by a run a grader's span claims."""
    found: set[Screening] = set()
    for agent_id, screening_id in sorted(set(wanted)):
        planned = select(screening_plans.c.agent_id).where(
            screening_plans.c.agent_id == agent_id,
            screening_plans.c.screening_id == screening_id,
        )
        graded = (
            select(runs.c.id)
            .where(
                runs.c.agent_id == agent_id,
                runs.c.screening_id == screening_id,
                runs.c.grader_claim == true(),
            )
            .limit(1)
        )
        if session.execute(planned).first() or session.execute(graded).first():
            found.add((agent_id, screening_id))
    return found


def unclaimed_screened(session: SqlSession, screenings: Iterable[Screening]) -> set[TraceKey]:
    """The traces of stored runs that name one of these screenings and that
    no grader's span claims: they are recomputed once the screening is a
    grader's, and leave it."""
    traces: set[TraceKey] = set()
    for agent_id, screening_id in sorted(set(screenings)):
        query = select(runs.c.owner, runs.c.trace_id).where(
            runs.c.agent_id == agent_id,
            runs.c.screening_id == screening_id,
            runs.c.grader_claim == false(),
        )
        traces.update((str(row.owner), str(row.trace_id)) for row in session.execute(query))
    return traces

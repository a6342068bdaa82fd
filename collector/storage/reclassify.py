"""The SQL of reclassification (CONVENTIONS.md section 5; collector.runs.reclassify):
which runs were recognised under other conventions, the stored spans of
their traces with what recognising them again needs, and the spans'
recognition written back. The same statements on SQLite and PostgreSQL,
through the session's placeholder.

A run's `conventions_digest` is the progress marker: a run is stale while
it differs from the current digest (or is null: stored before conventions)
and it is not sealed (retention removed spans of its trace: it keeps its
counts, docs/operations.md "Retention").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from collector.storage.session import SqlSession, in_chunks
from collector.storage.trace_spans import FACT_COLUMNS

_STALE = "(conventions_digest IS NULL OR conventions_digest <> {mark})"


class StaleRun(NamedTuple):
    seq: int
    owner: str
    trace_id: str


def _agents(session: SqlSession, agents: Sequence[str] | None) -> tuple[str, list[Any]]:
    if agents is None:
        return "", []
    return f" AND agent_id IN ({session.marks(len(agents))})", list(agents)


def stale_runs(
    session: SqlSession,
    digest: str,
    *,
    below: int | None,
    limit: int,
    agents: Sequence[str] | None = None,
) -> list[StaleRun]:
    """The newest `limit` unsealed runs recognised under another digest, with
    `seq` below `below` (None: from the newest), newest first. Walks the
    runs' primary key down from `below`: a batch reads about as many rows
    as the runs it skips, so a whole pass reads the table once."""
    where = "sealed_at IS NULL AND " + _STALE.format(mark=session.mark)
    values: list[Any] = [digest]
    if below is not None:
        where += f" AND seq < {session.mark}"
        values.append(below)
    agent_sql, agent_values = _agents(session, agents)
    cur = session.cursor()
    cur.execute(
        f"SELECT seq, owner, trace_id FROM runs WHERE {where}{agent_sql} "
        f"ORDER BY seq DESC LIMIT {int(limit)}",
        (*values, *agent_values),
    )
    return [StaleRun(int(seq), owner, trace_id) for seq, owner, trace_id in cur.fetchall()]


class StaleCount(NamedTuple):
    remaining: int  # runs to reclassify
    sealed: int  # runs under another digest that keep their counts


def count_stale(
    session: SqlSession, digest: str, agents: Sequence[str] | None = None
) -> StaleCount:
    """Runs under another digest, unsealed and sealed: one scan of the runs,
    done when a pass begins (not per batch)."""
    agent_sql, agent_values = _agents(session, agents)
    cur = session.cursor()
    cur.execute(
        "SELECT count(*), count(sealed_at) FROM runs WHERE "
        + _STALE.format(mark=session.mark)
        + agent_sql,
        (digest, *agent_values),
    )
    total, sealed = cur.fetchone()
    return StaleCount(int(total or 0) - int(sealed or 0), int(sealed or 0))


# A stored span as reclassification reads it: its row number, the columns run
# assembly reads (FACT_COLUMNS, trace_id first), then what recognition reads
# again (proto.StoredSpan: its resource's bytes, scope name and bytes).
_SPAN_COLUMNS = (
    "spans.id",
    *(f"spans.{name}" for name in FACT_COLUMNS),
    "resources.encoded",
    "spans.scope_name",
    "spans.encoded",
)


def stored_spans(
    session: SqlSession, owner: str, trace_ids: Sequence[str]
) -> Iterator[tuple[Any, ...]]:
    """Rows of these traces' spans (`_SPAN_COLUMNS`); a resource retention
    removed reads as None (an empty resource)."""
    numbers = sorted(session.trace_numbers([(owner, t) for t in trace_ids]).values())
    cur = session.cursor()
    for chunk in in_chunks(numbers):
        cur.execute(
            f"SELECT {', '.join(_SPAN_COLUMNS)} FROM spans "
            "LEFT JOIN resources ON resources.digest = spans.resource_digest "
            f"WHERE spans.trace_ref IN ({session.marks(len(chunk))})",
            tuple(chunk),
        )
        yield from cur.fetchall()


def update_recognition(session: SqlSession, changed: Sequence[tuple[str, str, str, int]]) -> None:
    """(role, rule, facts, span row number) of spans recognised again."""
    if changed:
        mark = session.mark
        session.cursor().executemany(
            f"UPDATE spans SET role = {mark}, rule = {mark}, facts = {mark} WHERE id = {mark}",
            list(changed),
        )


def seal_runs(session: SqlSession, seqs: Sequence[int], now: float) -> None:
    """Seal these runs (by row number): their trace has no span left."""
    for chunk in in_chunks(sorted(seqs)):
        session.cursor().execute(
            f"UPDATE runs SET sealed_at = {session.mark} WHERE sealed_at IS NULL "
            f"AND seq IN ({session.marks(len(chunk))})",
            (now, *chunk),
        )

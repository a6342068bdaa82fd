"""The kept per-agent sums of runs (run_totals, plus the run_deltas the
sweeper has not folded in yet), read in the shapes the views need.

Migration 0009's triggers keep them in every transaction that writes runs,
so they are exactly the sums a scan of `runs` gives, read in a few rows: the
headline views cost the same at 1M runs as at 100. A view with a time window
(`since`/`until`) still scans `runs`: sums are kept per agent, version,
status, cost source, outcome and task, never per time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    BigInteger,
    Select,
    Table,
    case,
    cast,
    func,
    literal_column,
    select,
    union_all,
)
from sqlalchemy.engine import Connection

from api.ports import RunFilter
from collector.storage.tables import (
    TOTALS_KEY_COLUMNS,
    TOTALS_SUM_COLUMNS,
    run_deltas,
    run_totals,
)

SUCCESS, FAILURE, UNKNOWN = 1, 0, 2  # success_key


def keepable(where: RunFilter) -> bool:
    """Whether the kept sums can answer this filter (no time window, no
    screening: the sums are kept per agent and version only)."""
    return where.since is None and where.until is None and where.screening is None


def version_key(version: str | None) -> str:
    return "" if version is None else "=" + version


def unkey(text: str) -> str | None:
    """A version or task key back to its value ('' is NULL). The cost source
    key is the value itself or '' (no source is ever empty)."""
    return None if text == "" else text[1:]


Agents = str | Sequence[str] | None  # one agent, these agents, or every agent


def _part(table: Table, agent_id: Agents, where: RunFilter) -> Select[Any]:
    query = select(*(table.c[name] for name in TOTALS_KEY_COLUMNS + TOTALS_SUM_COLUMNS))
    if isinstance(agent_id, str):
        query = query.where(table.c.agent_id == agent_id)
    elif agent_id is not None:
        query = query.where(table.c.agent_id.in_(list(agent_id)))
    if where.null_version:
        query = query.where(table.c.version_key == "")
    elif where.version is not None:
        query = query.where(table.c.version_key == version_key(where.version))
    return query


def kept(agent_id: Agents, where: RunFilter) -> Any:
    """Folded sums and pending changes together, as one row source."""
    return union_all(
        _part(run_totals, agent_id, where), _part(run_deltas, agent_id, where)
    ).subquery("kept")


def _count(column: Any) -> Any:
    """A sum of counts as an integer (PostgreSQL sums bigints as numeric)."""
    return cast(func.sum(column), BigInteger)


def _sums(k: Any) -> tuple[Any, ...]:
    """count, successes, latency sum, latency count, cost sum."""
    return (
        _count(k.c.runs),
        _count(case((k.c.success_key == SUCCESS, k.c.runs), else_=0)),
        func.sum(k.c.latency_sum),
        _count(k.c.latency_n),
        func.sum(k.c.cost_sum),
    )


def totals_rows(conn: Connection, agent_id: Agents, where: RunFilter) -> Iterable[tuple[Any, ...]]:
    """(agent, status, cost source, count, successes, latency sum, latency
    count, cost sum) per agent, status and cost source."""
    k = kept(agent_id, where)
    query = (
        select(k.c.agent_id, k.c.status, k.c.cost_source_key, *_sums(k))
        .group_by(k.c.agent_id, k.c.status, k.c.cost_source_key)
        .having(func.sum(k.c.runs) != 0)
    )
    for agent, status, source, *sums in conn.execute(query):
        yield (agent, status, (source or None), *sums)


def graded_rows(conn: Connection, agent_id: Agents, where: RunFilter) -> Iterable[tuple[str, int]]:
    """(agent, completed runs graded)."""
    k = kept(agent_id, where)
    query = (
        select(k.c.agent_id, _count(k.c.graded))
        .where(k.c.status == literal_column("'completed'"))
        .group_by(k.c.agent_id)
    )
    for agent, graded in conn.execute(query):
        yield agent, int(graded or 0)


def outcome_rows(conn: Connection, agent_id: str, where: RunFilter) -> Iterable[tuple[Any, ...]]:
    """(status, cost source, success, task, count, latency sum, latency count,
    cost sum): the shape of ReadStore.scores' one pass."""
    k = kept(agent_id, where)
    query = (
        select(
            k.c.status,
            k.c.cost_source_key,
            k.c.success_key,
            k.c.task_key,
            _count(k.c.runs),
            func.sum(k.c.latency_sum),
            _count(k.c.latency_n),
            func.sum(k.c.cost_sum),
        )
        .group_by(k.c.status, k.c.cost_source_key, k.c.success_key, k.c.task_key)
        .having(func.sum(k.c.runs) != 0)
    )
    for status, source, success, task, *sums in conn.execute(query):
        outcome = None if success == UNKNOWN else success == SUCCESS
        yield (status, (source or None), outcome, unkey(task), *sums)


def version_rows(conn: Connection, agent_id: str) -> Iterable[tuple[Any, ...]]:
    """(version, status, cost source, count, successes, latency sum, latency
    count, cost sum, first started, last started)."""
    k = kept(agent_id, RunFilter())
    query = (
        select(
            k.c.version_key,
            k.c.status,
            k.c.cost_source_key,
            *_sums(k),
            func.min(k.c.first_started),
            func.max(k.c.last_started),
        )
        .group_by(k.c.version_key, k.c.status, k.c.cost_source_key)
        .having(func.sum(k.c.runs) != 0)
    )
    for version, status, source, *rest in conn.execute(query):
        yield (unkey(version), status, (source or None), *rest)


def agent_rows(
    conn: Connection, agent_id: Agents = None
) -> dict[str, tuple[int, int | None, bool]]:
    """agent -> (runs, last started, listed), for every agent, one or these."""
    k = kept(agent_id, RunFilter())
    query = select(
        k.c.agent_id, _count(k.c.runs), func.max(k.c.last_started), _count(k.c.listed)
    ).group_by(k.c.agent_id)
    return {
        agent: (int(count or 0), last, bool(listed and listed > 0))
        for agent, count, last, listed in conn.execute(query)
    }

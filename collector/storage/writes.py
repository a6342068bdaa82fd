"""Span batch writes and span retention."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select

from collector.storage.resources import delete_unused_resources, register_resources
from collector.storage.rows import AGENT_COLUMNS, SPAN_COLUMNS, AgentRow, ResourceRow, SpanRow
from collector.storage.session import SqlSession
from collector.storage.tables import agents, pending_traces, spans, traces


def write_agents(session: SqlSession, agent_rows: Sequence[AgentRow]) -> None:
    """New agents (one already stored is left as it is)."""
    session.insert_ignore_rows(agents, AGENT_COLUMNS, agent_rows)


def write_batch(
    session: SqlSession,
    agent_rows: Sequence[AgentRow],
    span_rows: Sequence[SpanRow],
    resource_rows: Sequence[ResourceRow] = (),
) -> None:
    """One group commit's rows; duplicates (exporter retries) are stored once."""
    write_agents(session, agent_rows)
    register_resources(session, resource_rows)
    session.insert_spans(spans, SPAN_COLUMNS, span_rows)


# Rows one retention step deletes: a step is one job in the writer's group
# commit, so exports keep committing between steps (bench/retention.py).
RETENTION_STEP = 20_000


def delete_old_spans(
    session: SqlSession, older_than: float, now: float, limit: int = RETENTION_STEP
) -> int:
    """One step of span retention: up to `limit` old spans, up to `limit`
    trace rows no span refers to any more, resources no span can use and
    marks of traces that are gone. The runs of the traces that lost spans
    are sealed first: they keep their summary and scores (docs/operations.md
    "Retention"). Returns the spans and trace rows deleted: 0 means the pass
    is over."""
    trace_refs = session.delete_old_span_rows(older_than, limit)
    session.seal_runs(set(trace_refs), now)
    deleted = len(trace_refs) + session.delete_unused_traces(older_than, limit)
    delete_unused_resources(session, older_than)
    session.execute(
        delete(pending_traces).where(
            ~select(traces.c.id).where(traces.c.id == pending_traces.c.trace_ref).exists()
        )
    )
    return deleted

"""The named rows are the tables' columns, in order: what binds them positionally
(storage.dialect) and what reads them by name agree."""

from __future__ import annotations

import pickle

from collector.storage.rows import AgentRow, ResourceRow, RunRow, SpanRow
from collector.storage.tables import agents, resources, runs, spans
from tests.collector.span_rows import span_row

DATABASE_ASSIGNED = {"id", "trace_ref"}  # a span's row id and its trace's number
RUN_ASSIGNED = {"trace_ref", "seq", "merged", "sealed_at"}  # given as written, or by retention


def columns(table: object) -> list[str]:
    return [c.name for c in table.columns]  # type: ignore[attr-defined]


def test_span_rows_are_the_spans_columns_less_what_the_database_assigns() -> None:
    assert list(SpanRow._fields) == [c for c in columns(spans) if c not in DATABASE_ASSIGNED]


def test_run_agent_and_resource_rows_are_their_tables_columns() -> None:
    assert list(RunRow._fields) == [c for c in columns(runs) if c not in RUN_ASSIGNED]
    assert list(AgentRow._fields) == columns(agents)[:-1]  # a new agent is not deleted
    assert columns(agents)[-1] == "deleted_at"
    assert list(ResourceRow._fields) == columns(resources)


def test_rows_cross_processes_as_the_same_named_rows() -> None:
    row = span_row("t" * 32, "s" * 16, name="chat")
    copy = pickle.loads(pickle.dumps(row))
    assert type(copy) is SpanRow and copy == row and copy.name == "chat"

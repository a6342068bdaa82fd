"""PostgreSQL plans on a store autovacuum has not analysed yet (a new
database's first minute): lookups by trace number stay index probes."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from bench.support.postgres import PostgresCluster
from collector.storage.engine import open_database
from collector.storage.migrate import create_schema
from collector.storage.postgresql.numbers import SPANS_PER_NUMBER, rows_by_number

SPANS = 60_000


def plan_of(conn: object, sql: str, numbers: list[int]) -> str:
    raw = conn.connection.driver_connection  # type: ignore[attr-defined]
    rows = raw.execute(f"EXPLAIN (FORMAT JSON) {sql}", (numbers,)).fetchall()
    return json.dumps(rows[0][0])


@pytest.fixture
def unanalysed_spans(postgres: PostgresCluster) -> object:
    db = open_database(postgres.create_database())
    create_schema(db)
    with db.writer.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO spans (trace_ref, owner, trace_id, span_id, parent_span_id, "
                "agent_id, name, kind, start_ns, end_ns, status_code, status_message, flags, "
                "scope_name, received_at, grader, role, rule, facts, encoded, resource_digest) "
                "SELECT i / 9, 'o', md5(i::text), lpad(to_hex(i), 16, '0'), '', 'a', 'chat', 1, "
                "0, 0, 0, '', 0, '', 0, false, '', '', '{}', '\\x00', '\\x00' "
                "FROM generate_series(1, :n) AS i"
            ),
            {"n": SPANS},
        )
        assert conn.execute(
            text("SELECT reltuples < 0 FROM pg_class WHERE relname = 'spans'")
        ).scalar()
    yield db
    db.dispose()


def test_spans_are_counted_per_trace_number_through_the_index_before_any_analyse(
    unanalysed_spans: object,
) -> None:
    with unanalysed_spans.writer.connect() as conn:  # type: ignore[attr-defined]
        plan = plan_of(conn, SPANS_PER_NUMBER, list(range(1, 200, 2)))
        # The same question as one IN list: planned as a scan of every span.
        scan = plan_of(
            conn,
            "SELECT trace_ref, count(*) FROM spans WHERE trace_ref = ANY(%s) GROUP BY trace_ref",
            list(range(1, 200, 2)),
        )
    assert "ux_spans_identity" in plan and "Seq Scan" not in plan
    assert "Seq Scan" in scan


def test_a_trace_numbers_spans_are_read_through_the_index_before_any_analyse(
    unanalysed_spans: object,
) -> None:
    with unanalysed_spans.writer.connect() as conn:  # type: ignore[attr-defined]
        sql = rows_by_number("spans", "trace_ref", ("span_id", "facts"))
        plan = plan_of(conn, sql, list(range(1, 200, 2)))
    assert "ux_spans_identity" in plan and "Seq Scan" not in plan

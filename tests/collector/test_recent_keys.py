"""Traces and runs not merged into their key indexes yet (SQLite, migration
0012): found by every writer and reader, never stored twice, merged in bulk.

On PostgreSQL every row is indexed at once; the same behaviour must hold
there too, so every test runs on both stores.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from collector.storage.engine import Database, open_database
from collector.storage.migrate import create_schema, upgrade
from collector.storage.rows import RUN_COLUMNS, RunRow
from collector.storage.tables import runs
from collector.storage.writes import write_batch
from tests.collector.span_rows import span_row
from tests.collector.test_kept_totals import a_run


@pytest.fixture
def two_writers(database_url: str) -> Iterator[tuple[Database, Database]]:
    """Two processes' worth of writers on one database (each its own memory)."""
    first = open_database(database_url)
    create_schema(first)
    second = open_database(database_url)
    yield first, second
    first.dispose()
    second.dispose()


def run_of(index: int, trace: str, **values: object) -> RunRow:
    row = a_run(random.Random(index), index)._replace(trace_id=trace, owner="o")
    return row._replace(**values)  # type: ignore[arg-type]


def count(db: Database, sql: str) -> int:
    with db.reading() as session:
        return int(session.execute(text(sql)).scalar_one())


def test_a_trace_and_a_run_written_by_two_writers_are_stored_once(
    two_writers: tuple[Database, Database],
) -> None:
    first, second = two_writers
    with first.writing() as session:
        session.register_traces([("o", "t1")], 1.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(1, "t1", status="running")])
    with second.writing() as session:  # knows nothing of them but what is stored
        session.register_traces([("o", "t1")], 2.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(1, "t1", status="completed")])
    with first.writing() as session:
        session.register_traces([("o", "t1"), ("o", "t2")], 3.0)
        numbers = session.trace_numbers([("o", "t1"), ("o", "t2")])
    assert count(first, "SELECT count(*) FROM traces") == 2
    assert len(set(numbers.values())) == 2
    assert count(first, "SELECT count(*) FROM runs") == 1
    with first.reading() as session:
        (status,) = session.execute(text("SELECT status FROM runs")).one()
    assert status == "completed"


def test_rows_are_found_before_and_after_a_merge_by_readers_and_writers(
    database_url: str,
) -> None:
    db = open_database(database_url)
    create_schema(db)
    keys = [("o", f"{i:032x}") for i in range(30)]
    rows = [run_of(i, key[1]) for i, key in enumerate(keys)]
    with db.writing() as session:
        session.register_traces(keys, 1.0)
        write_batch(session, [], [span_row(t, "a" * 16) for _, t in keys])
        session.upsert_runs(runs, RUN_COLUMNS, rows)
    merged_before = count(db, "SELECT count(*) FROM runs WHERE merged")
    for forced in (False, True):
        with db.writing() as session:
            session.merge_key_tails(force=forced)
        with db.reading() as session:  # no memory: a scan of the recent rows
            assert set(session.trace_numbers(keys)) == set(keys)
            assert set(session.run_seqs([r.id for r in rows])) == {r.id for r in rows}
        with db.writing() as session:  # the writer's memory, or the index
            session.register_traces(keys, 2.0)
            write_batch(session, [], [span_row(t, "b" * 16) for _, t in keys])
            session.upsert_runs(runs, RUN_COLUMNS, rows)
        assert count(db, "SELECT count(*) FROM traces") == 30
        assert count(db, "SELECT count(*) FROM runs") == 30
        assert count(db, "SELECT count(*) FROM spans") == 60
    # Below the threshold nothing was merged; forced, everything was.
    assert merged_before == (30 if db.dialect == "postgresql" else 0)
    assert count(db, "SELECT count(*) FROM runs WHERE NOT merged") == 0
    assert count(db, "SELECT count(*) FROM traces WHERE NOT merged") == 0
    db.dispose()


def test_a_rolled_back_transaction_leaves_nothing_remembered(database_url: str) -> None:
    db = open_database(database_url)
    create_schema(db)
    with pytest.raises(RuntimeError), db.writing() as session:
        session.register_traces([("o", "gone")], 1.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(1, "gone")])
        raise RuntimeError("the commit fails")
    # Numbers the rolled-back rows had are given again: to these rows.
    with db.writing() as session:
        session.register_traces([("o", "kept")], 1.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(2, "kept")])
    with db.writing() as session:
        assert session.trace_numbers([("o", "gone")]) == {}
        assert session.run_seqs([run_of(1, "gone").id]) == {}
        kept = session.trace_numbers([("o", "kept")])[("o", "kept")]
        session.register_traces([("o", "gone")], 2.0)
        assert session.trace_numbers([("o", "gone")])[("o", "gone")] != kept
    assert count(db, "SELECT count(*) FROM traces") == 2
    assert count(db, "SELECT count(*) FROM runs") == 1
    db.dispose()


def test_rows_another_writer_deleted_are_forgotten(two_writers: tuple[Database, Database]) -> None:
    first, second = two_writers
    run = run_of(1, "t1")
    with first.writing() as session:
        session.register_traces([("o", "t1")], 1.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run])
    with second.writing() as session:  # retention (no span refers to it) and a stale run
        assert session.delete_unused_traces(older_than=5.0, limit=100) == 1
        session.delete_runs([run.id])
    with first.writing() as session:
        assert session.trace_numbers([("o", "t1")]) == {}
        assert session.run_seqs([run.id]) == {}
        session.register_traces([("o", "t1")], 6.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run])
        number = session.trace_numbers([("o", "t1")])[("o", "t1")]
    with first.reading() as session:
        stored = session.execute(text("SELECT trace_ref FROM runs")).scalars().all()
        assert stored == [number]
        assert session.execute(text("SELECT id FROM traces")).scalars().all() == [number]


def test_a_run_removed_and_stored_again_in_one_transaction_is_one_row(
    database_url: str,
) -> None:
    db = open_database(database_url)
    create_schema(db)
    run = run_of(1, "t1")
    with db.writing() as session:
        session.register_traces([("o", "t1")], 1.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run])
    with db.writing() as session:
        session.delete_runs([run.id])
        session.upsert_runs(runs, RUN_COLUMNS, [run])
        session.upsert_runs(runs, RUN_COLUMNS, [run._replace(status="failed")])
        assert [r[0] for r in session.select_runs_by_id(("status",), [run.id])] == ["failed"]
    assert count(db, "SELECT count(*) FROM runs") == 1
    db.dispose()


def test_upgrading_keeps_stored_traces_and_runs_found_and_their_sums_kept(
    empty_database_url: str,
) -> None:
    """0012 rebuilds `traces` and `runs` on SQLite: rows, indexes and the
    run-sum triggers of 0009 survive, and every stored row is merged."""
    db = open_database(empty_database_url)
    upgrade(db, "0011")
    old = run_of(1, "t1")
    with db.writer.begin() as conn:  # the schema of 0011: no key tail yet
        conn.execute(text("INSERT INTO traces (owner, trace_id, touched_at) VALUES ('o', 't1', 1)"))
        there = {c["name"] for c in inspect(conn).get_columns("runs")}  # 0011's columns
        columns = [c for c in RUN_COLUMNS if c in there]
        names = ", ".join(columns)
        marks = ", ".join(f":{c}" for c in columns)
        conn.execute(text(f"INSERT INTO runs ({names}) VALUES ({marks})"), old._asdict())
    create_schema(db)
    assert count(db, "SELECT count(*) FROM runs WHERE merged") == 1
    assert count(db, "SELECT count(*) FROM traces WHERE merged") == 1
    with db.writing() as session:
        assert set(session.run_seqs([old.id])) == {old.id}
        session.register_traces([("o", "t1")], 2.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(2, "t1")])
    assert count(db, "SELECT count(*) FROM traces") == 1
    assert count(db, "SELECT count(*) FROM runs") == 2
    assert count(db, "SELECT count(*) FROM run_deltas") >= 1  # the insert trigger
    with db.writing() as session:
        session.merge_key_tails(force=True)
    with pytest.raises(Exception, match="(?i)unique"), db.writing() as session:
        session.execute(text("UPDATE runs SET id = :id"), {"id": old.id})
    db.dispose()


def test_a_reader_finds_rows_not_merged_from_their_index_alone(tmp_path: Path) -> None:
    """Without the writer's memory, a lookup scans the rows not merged yet:
    the index of those rows holds the keys (migration 0013), so the scan
    never visits the table."""
    db = open_database(f"sqlite:///{tmp_path / 'tail.db'}")
    create_schema(db)
    keys = [("o", f"{i:032x}") for i in range(5)]
    with db.writing() as session:
        session.register_traces(keys, 1.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(i, t) for i, (_, t) in enumerate(keys)])
    statements: list[str] = []
    with db.reading() as session:
        raw = session.conn.connection.dbapi_connection
        raw.set_trace_callback(statements.append)  # type: ignore[union-attr]
        assert set(session.trace_numbers(keys)) == set(keys)
        assert len(session.run_seqs([run_of(i, t).id for i, (_, t) in enumerate(keys)])) == 5
        raw.set_trace_callback(None)  # type: ignore[union-attr]
        lookups = [s for s in statements if "merged = 0" in s]
        plans = [
            " | ".join(row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {s}"))  # type: ignore[union-attr]
            for s in lookups
        ]
    db.dispose()
    assert len(plans) == 2
    assert "COVERING INDEX ix_traces_unmerged" in plans[0]
    assert "COVERING INDEX ix_runs_unmerged" in plans[1]

"""Cross-process coordination in storage: trace rows as locks, retention, the sweeper lease."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from bench.support.postgres import PostgresCluster
from collector.runs.store import load_trace_facts
from collector.storage.engine import Database, open_database
from collector.storage.migrate import create_schema
from collector.storage.sweeper_lease import SweeperLease
from collector.storage.writes import delete_old_spans, write_batch
from tests.collector.span_rows import span_row
from tests.waiting import terminate_backends


def migrated(url: str) -> Database:
    db = open_database(url)
    create_schema(db)
    return db


@pytest.mark.timing
def test_one_sweeper_per_postgresql_database_and_takeover_when_it_dies(
    database_url: str,
) -> None:
    db, other_db = migrated(database_url), open_database(database_url)
    first, second = SweeperLease(db), SweeperLease(other_db)
    try:
        assert first.held()
        if db.dialect == "sqlite":  # one writer by construction: everyone may sweep
            assert second.held()
            return
        assert not second.held()
        assert first.held()  # kept across sweeps
        # The holder's session dies; its lock is free once its backend has exited.
        terminate_backends(
            database_url,
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = %s)",
            database_url.rsplit("/", 1)[1],
        )
        assert second.held()
        assert not first.held()  # notices the lost session, and the lease is taken
        second.release()
        assert first.held()
    finally:
        first.release()
        second.release()
        db.dispose()
        other_db.dispose()


@pytest.mark.timing
def test_a_locked_trace_waits_for_the_transaction_holding_it(postgres: PostgresCluster) -> None:
    """PostgreSQL only: on SQLite, BEGIN IMMEDIATE already makes writers take turns."""
    db = migrated(postgres.create_database())
    acquired = threading.Event()

    def second_writer() -> None:
        with db.writing() as session:
            session.register_traces([("o", "t2"), ("o", "t1")], 2.0)
            acquired.set()

    try:
        with db.writing() as session:
            session.register_traces([("o", "t1")], 1.0)
            thread = threading.Thread(target=second_writer)
            thread.start()
            assert not acquired.wait(0.5)  # held until we commit
        assert acquired.wait(10)
        thread.join(10)
        with db.reading() as session:
            rows = session.execute(text("SELECT trace_id, touched_at FROM traces ORDER BY 1"))
            assert [tuple(r) for r in rows] == [("t1", 2.0), ("t2", 2.0)]
    finally:
        db.dispose()


def test_retention_deletes_old_spans_and_trace_rows_no_span_needs(database_url: str) -> None:
    db = migrated(database_url)
    try:
        with db.writing() as session:
            session.register_traces([("o", t) for t in ("old", "held", "spanned", "gone")], 1.0)
            session.register_traces([("o", "new")], 100.0)
            rows = [span_row("spanned", "s1", received_at=10.0)]
            rows += [span_row("spanned", "s2", received_at=60.0)]
            write_batch(session, [], [*rows, span_row("gone", "s3", received_at=10.0)])
        holder = None
        if db.dialect == "postgresql":  # a writer holds one old row right now
            holder = db.writer.connect()
            holder.begin()
            db.session(holder).register_traces([("o", "held")], 1.0)
        with db.writing() as session:
            # two spans; the trace rows old, gone and (SQLite) held
            assert delete_old_spans(session, older_than=50.0, now=60.0) == (4 if holder else 5)
        if holder is not None:
            holder.rollback()
            holder.close()
        with db.reading() as session:
            left = {r[0] for r in session.execute(text("SELECT trace_id FROM traces"))}
            kept = session.execute(text("SELECT span_id FROM spans")).all()
            facts = load_trace_facts(session, "o", ["spanned"])
        # "held" goes on SQLite (one writer: nobody can hold it) and stays on
        # PostgreSQL while its writer is open; "spanned" keeps its last span.
        expected = {"new", "spanned", "held"} if db.dialect == "postgresql" else {"new", "spanned"}
        assert left == expected
        assert [tuple(r) for r in kept] == [("s2",)]
        assert [f.span_id for f in facts["spanned"]] == ["s2"]
    finally:
        db.dispose()


@pytest.mark.timing
def test_the_lease_is_shared_by_every_thread_of_its_process(postgres: PostgresCluster) -> None:
    """The recompute thread sweeps, and so may a caller: both hold the one lease."""
    db = migrated(postgres.create_database())
    lease = SweeperLease(db)
    answers: list[bool] = []

    def ask() -> None:
        answers.extend(lease.held() for _ in range(50))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert answers == [True] * 200
    finally:
        lease.release()
        db.dispose()


def test_retention_steps_delete_a_bounded_number_of_rows_until_nothing_is_old(
    database_url: str,
) -> None:
    db = migrated(database_url)
    try:
        with db.writing() as session:
            session.register_traces([("o", f"t{i}") for i in range(5)], 1.0)
            rows = [
                span_row(f"t{i}", f"s{i}{j}", received_at=10.0) for i in range(5) for j in range(3)
            ]
            write_batch(session, [], [*rows, span_row("t0", "young", received_at=90.0)])
        steps = []
        while True:
            with db.writing() as session:
                deleted = delete_old_spans(session, older_than=50.0, now=60.0, limit=4)
            if not deleted:
                break
            steps.append(deleted)
        assert max(steps) <= 8 and sum(steps) == 15 + 4  # 15 spans, 4 emptied traces
        with db.reading() as session:
            assert [tuple(r) for r in session.execute(text("SELECT span_id FROM spans"))] == [
                ("young",)
            ]
            assert session.execute(text("SELECT count(*) FROM traces")).scalar() == 1
    finally:
        db.dispose()


def test_a_retention_step_looks_no_further_than_the_oldest_rows(database_url: str) -> None:
    """Rows arrive in number order, so old spans and emptied traces are at the
    head; a step that looked past `limit` rows would scan the whole store to
    find that nothing is old (docs/sizing.md)."""
    db = migrated(database_url)
    try:
        with db.writing() as session:
            session.register_traces([("o", f"live{i}") for i in range(4)], 90.0)
            session.register_traces([("o", "emptied")], 1.0)
            young = [span_row(f"live{i}", f"y{i}", received_at=90.0) for i in range(4)]
            late = span_row("emptied", "late-but-old", received_at=10.0)
            write_batch(session, [], [*young, late])
        with db.writing() as session:
            assert delete_old_spans(session, older_than=50.0, now=60.0, limit=4) == 0
        with db.writing() as session:  # a wider window reaches both
            assert delete_old_spans(session, older_than=50.0, now=60.0, limit=5) == 2
        with db.reading() as session:
            assert session.execute(text("SELECT count(*) FROM spans")).scalar() == 4
            assert session.execute(text("SELECT count(*) FROM traces")).scalar() == 4
    finally:
        db.dispose()

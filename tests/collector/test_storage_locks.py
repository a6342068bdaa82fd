"""Cross-process coordination in storage: trace locks and the sweeper lease."""

from __future__ import annotations

import threading

from sqlalchemy import text

from collector.storage.dialect import lock_traces
from collector.storage.engine import Database, create_schema, open_database
from collector.storage.sweeper_lease import SweeperLease
from tests.postgres import PostgresCluster


def migrated(url: str) -> Database:
    db = open_database(url)
    create_schema(db)
    return db


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
        with db.reader.connect() as conn:  # the holder's session dies
            conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks "
                    "WHERE locktype = 'advisory' AND granted"
                )
            )
            conn.commit()
        assert second.held()
        assert not first.held()  # notices the lost session, and the lease is taken
        second.release()
        assert first.held()
    finally:
        first.release()
        second.release()
        db.dispose()
        other_db.dispose()


def test_a_locked_trace_waits_for_the_transaction_holding_it(postgres: PostgresCluster) -> None:
    """PostgreSQL only: on SQLite, BEGIN IMMEDIATE already makes writers take turns."""
    db = migrated(postgres.create_database())
    acquired = threading.Event()

    def second_writer() -> None:
        with db.writer.begin() as conn:
            lock_traces(conn, [("o", "t2"), ("o", "t1")], 2.0)
            acquired.set()

    try:
        with db.writer.begin() as conn:
            lock_traces(conn, [("o", "t1")], 1.0)
            thread = threading.Thread(target=second_writer)
            thread.start()
            assert not acquired.wait(0.5)  # held until we commit
        assert acquired.wait(10)
        thread.join(10)
        with db.reader.connect() as conn:
            rows = conn.execute(text("SELECT trace_id, touched_at FROM trace_locks ORDER BY 1"))
            assert [tuple(r) for r in rows] == [("t1", 2.0), ("t2", 2.0)]
    finally:
        db.dispose()

"""Which failures are the database's (retry later) and which the statement's,
and the one log line per change of the database's state (storage.failures,
storage.health)."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from collector.errors import StoreUnavailable
from collector.storage.failures import is_unavailable
from collector.storage.health import DatabaseHealth


def failure(conn: sqlite3.Connection, sql: str) -> sqlite3.Error:
    with pytest.raises(sqlite3.Error) as caught:
        conn.execute(sql)
    return caught.value


def test_a_statement_sqlite_cannot_run_is_not_an_outage(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "a.db")
    assert not is_unavailable(failure(conn, "SELECT * FROM no_such_table"))
    assert not is_unavailable(failure(conn, "SELEC 1"))
    engine = create_engine(f"sqlite:///{tmp_path / 'a.db'}")
    with pytest.raises(OperationalError) as wrapped, engine.connect() as sql:
        sql.execute(text("SELECT * FROM no_such_table"))
    assert not is_unavailable(wrapped.value)  # SQLAlchemy's wrapper of the same


def test_a_full_or_locked_sqlite_database_is_an_outage(tmp_path: Path) -> None:
    full = sqlite3.connect(tmp_path / "full.db", isolation_level=None)
    full.execute("CREATE TABLE t (x BLOB)")
    full.execute("PRAGMA max_page_count = 3")  # SQLite answers SQLITE_FULL past it
    full_error = failure(full, "INSERT INTO t VALUES (zeroblob(100000))")
    assert full_error.sqlite_errorcode == sqlite3.SQLITE_FULL
    assert is_unavailable(full_error)
    holder = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(tmp_path / "locked.db", timeout=0, isolation_level=None)
    assert is_unavailable(failure(waiter, "BEGIN IMMEDIATE"))  # database is locked


def test_an_outage_is_logged_once_when_it_begins_and_once_when_it_ends(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    moments = iter([100.0, 112.5])
    health = DatabaseHealth(clock=lambda: next(moments))
    locked = sqlite3.OperationalError("database is locked")
    locked.sqlite_errorcode = sqlite3.SQLITE_BUSY
    with caplog.at_level(logging.INFO, logger="collector.storage.health"):
        assert not health.failed(ValueError("not the database's"))
        assert not health.down
        assert all(health.failed(locked) for _ in range(50))
        assert health.failed(StoreUnavailable())  # a refusal made of one: counted then
        assert health.down
        problem = health.problem(locked)
        assert problem is not None and problem.retry_after_s == 2
        assert problem.detail == "the database is unavailable; retry later"
        health.recovered()
        health.recovered()
    assert not health.down
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "ERROR",
            "database unavailable (OperationalError: database is locked); exports and API "
            "writes answer 503 / UNAVAILABLE until it is back",
        ),
        (
            "WARNING",
            "database available again after 12.5 s; 51 operations were refused meanwhile",
        ),
    ]

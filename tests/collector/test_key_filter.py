"""The writer's filter of stored keys (SQLite): a key it says was never
stored is not looked up, so it must hold every stored key, including keys
other writers stored and merged, before it is used at all."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from collector.storage.engine import Database, open_database
from collector.storage.migrate import create_schema
from collector.storage.rows import RUN_COLUMNS
from collector.storage.session import SqlSession
from collector.storage.sqlite import key_tail
from collector.storage.sqlite.key_filter import FIRST_PART_KEYS, KeyFilter
from collector.storage.sqlite.key_tail import KeyTxn
from collector.storage.sqlite.session import SqliteSession
from collector.storage.tables import runs
from tests.collector.test_recent_keys import count, run_of


def keys_of(session: SqlSession) -> KeyTxn | None:
    """The write transaction's view of the key tail."""
    assert isinstance(session, SqliteSession)
    return session.keys


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'keys.db'}"


@pytest.fixture
def stored(sqlite_url: str) -> Iterator[Database]:
    """A store of 10 traces with a run each, half of them merged."""
    db = open_database(sqlite_url)
    create_schema(db)
    for half in (range(5), range(5, 10)):
        with db.writing() as session:
            session.register_traces([("o", f"t{i}") for i in half], 1.0)
            session.upsert_runs(runs, RUN_COLUMNS, [run_of(i, f"t{i}") for i in half])
            session.merge_key_tails(force=half.start == 0)
    yield db
    db.dispose()


def test_every_key_added_is_in_the_filter_and_few_others_seem_to_be() -> None:
    keys = [("owner", uuid.uuid4().hex) for _ in range(FIRST_PART_KEYS + 40_000)]
    others = [("owner", uuid.uuid4().hex) for _ in range(100_000)]
    seen = KeyFilter()
    for key in keys:
        seen.add(key)
    assert all(key in seen for key in keys)  # a second part was started
    # A full first part and a second one a sixth full: ~0.6% measured.
    assert sum(key in seen for key in others) / len(others) < 0.01


def test_a_new_trace_and_run_are_stored_without_looking_them_up(stored: Database) -> None:
    statements: list[str] = []
    with stored.writing() as session:
        session.conn.connection.dbapi_connection.set_trace_callback(statements.append)  # type: ignore[union-attr]
        session.register_traces([("o", "new"), ("o", "t1")], 2.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(20, "new"), run_of(1, "t1")])
        session.conn.connection.dbapi_connection.set_trace_callback(None)  # type: ignore[union-attr]
    lookups = " ".join(s for s in statements if "merged = 1" in s)
    # The stored trace and run are looked up; the new ones are not.
    assert "'t1'" in lookups and run_of(1, "t1").id in lookups
    assert "'new'" not in lookups and run_of(20, "new").id not in lookups
    assert count(stored, "SELECT count(*) FROM traces") == 11
    assert count(stored, "SELECT count(*) FROM runs") == 11


def test_a_writer_reading_the_stored_keys_in_steps_finds_every_stored_row(
    stored: Database, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(key_tail, "FILTER_ROWS_PER_TXN", 3)
    later = open_database(sqlite_url)  # a process started on a stored database
    whole = []
    for step in range(6):
        with later.writing() as session:
            txn = keys_of(session)
            assert txn is not None
            whole.append(txn.trace_filter is not None and txn.run_filter is not None)
            session.register_traces([("o", f"t{i}") for i in range(10)] + [("o", f"n{step}")], 3.0)
            session.upsert_runs(runs, RUN_COLUMNS, [run_of(i, f"t{i}") for i in range(10)])
        assert count(later, "SELECT count(*) FROM traces") == 11 + step
        assert count(later, "SELECT count(*) FROM runs") == 10
    later.dispose()
    # 3 rows per transaction, of 10 traces and one more per transaction:
    # the 4th reads 3 (all there were, as far as it can tell), the 5th 2.
    assert whole == [False, False, False, False, True, True]


def test_keys_another_writer_stored_and_merged_are_found(stored: Database, sqlite_url: str) -> None:
    with stored.writing() as session:  # its filter holds every stored key
        assert keys_of(session).trace_filter is not None  # type: ignore[union-attr]
    other = open_database(sqlite_url)
    with other.writing() as session:
        session.register_traces([("o", "theirs")], 2.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(30, "theirs")])
        session.merge_key_tails(force=True)  # out of every writer's memory of recent rows
    other.dispose()
    with stored.writing() as session:
        session.register_traces([("o", "theirs")], 3.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(30, "theirs", status="timeout")])
    assert count(stored, "SELECT count(*) FROM traces") == 11
    assert count(stored, "SELECT count(*) FROM runs") == 11
    theirs = f"SELECT status FROM runs WHERE id = '{run_of(30, 'theirs').id}'"
    with stored.reading() as session:
        assert session.execute(text(theirs)).scalars().all() == ["timeout"]


def test_a_writer_warmed_at_start_uses_its_filter_at_once_and_finds_later_rows(
    stored: Database, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(key_tail, "FILTER_ROWS_PER_TXN", 3)
    later = open_database(sqlite_url)
    later.backend.warm()  # as `serve` does before opening its doors
    with stored.writing() as session:  # stored and merged after the warm-up
        session.register_traces([("o", "after")], 2.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(40, "after")])
        session.merge_key_tails(force=True)
    with later.writing() as session:
        txn = keys_of(session)
        assert txn is not None and txn.trace_filter is not None and txn.run_filter is not None
        keys = [("o", f"t{i}") for i in range(10)] + [("o", "after"), ("o", "new")]
        session.register_traces(keys, 3.0)
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(i, f"t{i}") for i in range(10)])
        session.upsert_runs(runs, RUN_COLUMNS, [run_of(40, "after"), run_of(41, "new")])
    later.dispose()
    assert count(stored, "SELECT count(*) FROM traces") == 12
    assert count(stored, "SELECT count(*) FROM runs") == 12

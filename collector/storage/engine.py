"""Engines for one database URL, and schema creation.

SQLite: WAL, `synchronous=FULL` by default (docs/otlp.md), a busy timeout, and a
separate *write* engine whose transactions start with BEGIN IMMEDIATE, so the
batch writer and the run recomputer queue for the write lock instead of failing
a read-to-write upgrade. PostgreSQL uses one engine for both.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import Connection

from collector.storage.recent_keys import RecentKeys, keys_of

_WAL_ATTEMPTS = 200  # 10 s


@dataclass(frozen=True)
class Database:
    reader: Engine
    writer: Engine
    # SQLite: the writer's memory of rows not merged into the key indexes
    # yet (storage/recent_keys.py); PostgreSQL indexes every row at once.
    recent_keys: RecentKeys | None = None

    @property
    def dialect(self) -> str:
        return self.writer.dialect.name

    def dispose(self) -> None:
        self.reader.dispose()
        self.writer.dispose()


@contextmanager
def writing(db: Database) -> Iterator[Connection]:
    """A write transaction. SQLite: with the writer's memory of rows not
    merged yet (storage/recent_keys.py), which keeps what the transaction
    added once it has committed, and only then."""
    recent = db.recent_keys
    with db.writer.begin() as conn, keys_of(recent, conn) as keys:
        yield conn
    if recent is not None and keys is not None:
        recent.committed(keys)


def open_database(url: str, *, synchronous: str = "FULL") -> Database:
    if url.startswith("sqlite"):
        reader = _sqlite_engine(url, synchronous, immediate=False)
        writer = _sqlite_engine(url, synchronous, immediate=True)
        return Database(reader, writer, RecentKeys())
    engine = create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=8)
    return Database(engine, engine)


def _sqlite_engine(url: str, synchronous: str, *, immediate: bool) -> Engine:
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    mode = synchronous.upper()
    if mode not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
        raise ValueError(f"sqlite synchronous must be OFF, NORMAL, FULL or EXTRA, not {mode}")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves, below
        cursor = dbapi_conn.cursor()
        # New files only (fixed once the first table exists): span rows are
        # ~1 KB, and 16 KiB pages took ingest from ~24k to ~26k spans/s
        # (bench/ingest.py, 5 rounds each; fewer page splits and WAL frames).
        cursor.execute("PRAGMA page_size=16384")
        _switch_to_wal(cursor)
        cursor.execute(f"PRAGMA synchronous={mode}")
        cursor.execute("PRAGMA busy_timeout=30000")
        # Checkpoint every 4,000 pages (64 MB of WAL) rather than 1,000: a
        # checkpoint writes each changed page once however many commits
        # changed it, and the random-keyed indexes (traces, runs) change the
        # same pages commit after commit. With 600k spans stored ingest went
        # from ~23k to ~27k spans/s (bench/ingest.py --growing); 10,000 did
        # no better.
        cursor.execute("PRAGMA wal_autocheckpoint=4000")
        # Per-agent aggregates scan a covering index of ~80 B per run; the
        # default 2 MB page cache re-reads it on every request past ~25k runs.
        cursor.execute("PRAGMA cache_size=-131072")
        cursor.execute("PRAGMA mmap_size=1073741824")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _switch_to_wal(cursor: Any) -> None:
    """Processes opening one new file at once: the losers' switch to WAL fails
    at once with "database is locked" (the busy timeout does not apply to it),
    so it is retried for a few seconds.
    """
    for attempt in range(_WAL_ATTEMPTS):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == _WAL_ATTEMPTS - 1:
                raise
            time.sleep(0.05)


def ping(db: Database) -> bool:
    try:
        with db.reader.connect() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except Exception:
        return False

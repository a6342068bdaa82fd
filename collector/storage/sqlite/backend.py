"""SQLite's engines and sessions.

WAL, `synchronous=FULL` by default (docs/otlp.md), a busy timeout, and a
separate *write* engine whose transactions start with BEGIN IMMEDIATE, so the
batch writer and the run recomputer queue for the write lock instead of failing
a read-to-write upgrade. The process's memory of the key tail
(storage/sqlite/key_tail.py) belongs to the backend and is handed to each
write session.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import Connection

from collector.storage.session import SqlSession
from collector.storage.sqlite.key_tail import RecentKeys
from collector.storage.sqlite.session import SqliteSession

_WAL_ATTEMPTS: Final = 200  # 10 s
SYNCHRONOUS_MODES: Final = ("OFF", "NORMAL", "FULL", "EXTRA")


class SqliteBackend:
    name = "sqlite"

    def __init__(self, url: str, synchronous: str) -> None:
        mode = synchronous.upper()
        if mode not in SYNCHRONOUS_MODES:
            raise ValueError(f"sqlite synchronous must be OFF, NORMAL, FULL or EXTRA, not {mode}")
        self.reader = _sqlite_engine(url, mode, immediate=False)
        self.writer = _sqlite_engine(url, mode, immediate=True)
        self.recent_keys = RecentKeys()
        file = make_url(url).database
        self.folder = Path(file).resolve().parent if file and file != ":memory:" else None

    def session(self, conn: Connection) -> SqlSession:
        return SqliteSession(conn, recent=self.recent_keys)

    @contextmanager
    def write_session(self, conn: Connection) -> Iterator[SqlSession]:
        """With the writer's memory of the key tail, brought up to date
        first (the transaction holds the write lock)."""
        yield SqliteSession(conn, self.recent_keys.transaction(conn), self.recent_keys)

    def committed(self, session: SqlSession) -> None:
        """What the transaction added to the key tail is kept, now that it is stored."""
        if isinstance(session, SqliteSession) and session.keys is not None:
            self.recent_keys.committed(session.keys)

    def vacuum_retained(self) -> None:
        """SQLite reuses freed pages at once."""

    def warm(self) -> None:
        """The stored keys into the filters, in one snapshot, before any export."""
        with self.reader.begin() as conn:
            self.recent_keys.warm(conn)


def _sqlite_engine(url: str, mode: str, *, immediate: bool) -> Engine:
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

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

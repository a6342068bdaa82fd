"""PostgreSQL's engine and sessions: one engine reads and writes; several
processes may share the database (storage/postgresql/session.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine
from sqlalchemy.engine import Connection

from collector.storage.postgresql.session import PostgresSession
from collector.storage.session import RETAINED_TABLES, SqlSession


class PostgresBackend:
    name = "postgresql"
    folder: Path | None = None  # a server: no file to keep a signing key beside

    def __init__(self, url: str) -> None:
        engine = create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=8)
        self.reader = engine
        self.writer = engine

    def session(self, conn: Connection) -> SqlSession:
        return PostgresSession(conn)

    @contextmanager
    def write_session(self, conn: Connection) -> Iterator[SqlSession]:
        yield PostgresSession(conn)

    def committed(self, session: SqlSession) -> None:
        """Every row is indexed at once: nothing is kept in memory."""

    def vacuum_retained(self) -> None:
        """Make the rows a retention pass deleted free space now. Autovacuum
        comes at most once a naptime (a minute), and ingest meanwhile extends
        the tables instead of reusing the space (bench/retention.py)."""
        with self.writer.connect() as conn:
            autocommit = conn.execution_options(isolation_level="AUTOCOMMIT")
            autocommit.exec_driver_sql(f"VACUUM {', '.join(RETAINED_TABLES)}")

    def warm(self) -> None:
        """Nothing is kept in memory."""

"""Opening the database: the one place that chooses SQLite or PostgreSQL.

`open_database` picks the backend from the URL once; from then on every
connection is used through a session of that backend (storage/session.py),
so nothing above asks which database it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine, make_url, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

from collector.storage.failures import is_unavailable
from collector.storage.health import DatabaseHealth
from collector.storage.postgresql.backend import PostgresBackend
from collector.storage.session import Backend, SqlSession
from collector.storage.sqlite.backend import SqliteBackend


@dataclass(frozen=True)
class Database:
    backend: Backend
    # Whether it can be written now, as everything in this process meets it
    # (storage.health): one log line per outage, and what /readyz reads.
    health: DatabaseHealth = field(default_factory=DatabaseHealth, compare=False, repr=False)

    @property
    def reader(self) -> Engine:
        return self.backend.reader

    @property
    def writer(self) -> Engine:
        """SQLite: transactions begin IMMEDIATE (they queue for the write lock)."""
        return self.backend.writer

    @property
    def folder(self) -> Path | None:
        """The folder of the database's file; None for a server or memory."""
        return self.backend.folder

    @property
    def dialect(self) -> str:
        """The backend's name, for logs, figures and tests."""
        return self.backend.name

    @contextmanager
    def writing(self) -> Iterator[SqlSession]:
        """A write transaction, committed when the block ends without an error.
        SQLite: with the writer's memory of the key tail, which keeps what
        the transaction added once it has committed, and only then."""
        with self.writer.begin() as conn, self.backend.write_session(conn) as session:
            yield session
        self.backend.committed(session)

    @contextmanager
    def reading(self) -> Iterator[SqlSession]:
        """A read connection (each statement sees what is committed then).

        One that fails because the database went away is dropped, not
        returned to the pool: the hot paths use raw cursors, whose errors
        SQLAlchemy never sees, and the pool's reset of such a connection
        logged a traceback for each (bench/faults.py outage)."""
        with self.reader.connect() as conn:
            try:
                yield self.backend.session(conn)
            except Exception as exc:
                if is_unavailable(exc):
                    conn.invalidate()
                raise

    def session(self, conn: Connection) -> SqlSession:
        """A session over a connection the caller holds (its own transaction)."""
        return self.backend.session(conn)

    def dispose(self) -> None:
        self.reader.dispose()
        self.writer.dispose()


def open_database(url: str, *, synchronous: str = "FULL") -> Database:
    """`synchronous`: SQLite's fsync mode (docs/otlp.md); PostgreSQL has its own."""
    if url.startswith("sqlite"):
        return Database(SqliteBackend(url, synchronous))
    return Database(PostgresBackend(url))


class NoDatabase(Exception):
    """The settings name a database that is not there. Only `serve` and `db
    upgrade` create one: any other command that made a new empty file in
    the wrong folder would hand out keys the server never sees."""


def describe(url: str) -> str:
    """The database a URL names, as a user recognises it: a SQLite file's
    absolute path, else the URL without its password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        name = parsed.database
        return os.path.abspath(name) if name and name != ":memory:" else "(in memory)"
    return parsed.render_as_string(hide_password=True)


def open_existing(url: str, *, synchronous: str = "FULL") -> Database:
    """The database the URL names, or NoDatabase when it does not exist (a
    SQLite file not there, a PostgreSQL database that refuses or is missing)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        name = parsed.database
        if name and name != ":memory:" and not os.path.exists(name):
            raise NoDatabase(
                f"no database at {describe(url)}: `badge-collector serve` or "
                "`badge-collector db upgrade` creates it (or point BADGE_DATABASE_URL / "
                "--database-url at the one your collector uses)"
            )
    db = open_database(url, synchronous=synchronous)
    try:
        with db.reader.connect():
            pass
    except DBAPIError as exc:
        db.dispose()
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        raise NoDatabase(f"cannot open the database {describe(url)}: {reason}") from None
    return db


def ping(db: Database) -> bool:
    """Whether the database answers a query now (an outage found here is
    noted in its health, so the batch writer starts probing for its end)."""
    try:
        with db.reader.connect() as conn:
            conn.execute(text("SELECT 1"))
        return True
    except Exception as exc:
        db.health.failed(exc)
        return False

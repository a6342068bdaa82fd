"""Why a write failed: the database (retry later) or the data (refuse it).

The writer splits a failed group commit unless the database itself is
unusable (collector.writer); these two questions decide it. The hot paths
use raw DB-API cursors, so the drivers' own classes are listed beside
SQLAlchemy's.
"""

from __future__ import annotations

import sqlite3
from typing import Final

import psycopg
import sqlalchemy.exc

# The database, not the data: no connection, locked, out of disk, or (PostgreSQL)
# a transaction rolled back by a deadlock or serialization failure (psycopg
# files class 40 under OperationalError).
_UNAVAILABLE: Final = (
    sqlite3.OperationalError,
    sqlite3.InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.DisconnectionError,
    sqlalchemy.exc.TimeoutError,
)


# Values the database or its driver cannot hold (out of range, bad text):
# the data's fault, not the database's.
_UNSTORABLE: Final = (
    sqlite3.DataError,
    psycopg.DataError,
    sqlalchemy.exc.DataError,
    OverflowError,  # sqlite3: "Python int too large to convert to SQLite INTEGER"
    UnicodeError,
    ValueError,
    TypeError,
)


# sqlite3 files a statement's own mistakes (no such table, a syntax error)
# under OperationalError too, with SQLite's generic result code: those are
# the code's fault, never the database's, and retrying them cannot help.
_SQLITE_STATEMENT_ERROR: Final = 1  # SQLITE_ERROR (sqlite.org/rescode.html)


def is_unavailable(exc: BaseException) -> bool:
    """Whether a failed operation says the database is unusable right now
    (down, locked, out of disk: retry later), rather than that something in
    the data or the statement is wrong."""
    if isinstance(exc, sqlalchemy.exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        if exc.orig is not None and _is_statement_error(exc.orig):
            return False
    return isinstance(exc, _UNAVAILABLE) and not _is_statement_error(exc)


def _is_statement_error(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+: SQLite's extended code
    return (
        isinstance(exc, sqlite3.Error)
        and code is not None
        and code & 0xFF == (_SQLITE_STATEMENT_ERROR)
    )


def is_unstorable(exc: BaseException) -> bool:
    """Whether a failed write says a value in its data cannot be stored."""
    if isinstance(exc, sqlalchemy.exc.StatementError) and exc.orig is not None:
        return isinstance(exc.orig, _UNSTORABLE)
    return isinstance(exc, _UNSTORABLE)

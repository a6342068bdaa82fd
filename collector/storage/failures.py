"""Why a write failed: the database (retry later) or the data (refuse it).

The writer splits a failed group commit unless the database itself is
unusable (collector.writer); these two questions decide it. The hot paths
use raw DB-API cursors, so the drivers' own classes are listed beside
SQLAlchemy's. psycopg's are looked up only once it is loaded: no psycopg
error exists before, and a process on SQLite never loads it (importing it
was 0.07 s of CPU of every command's start, issue 43).
"""

from __future__ import annotations

import sqlite3
import sys
from typing import Final

import sqlalchemy.exc

# The database, not the data: no connection, locked, out of disk, or (PostgreSQL)
# a transaction rolled back by a deadlock or serialization failure (psycopg
# files class 40 under OperationalError).
_UNAVAILABLE: Final = (
    sqlite3.OperationalError,
    sqlite3.InterfaceError,
    sqlalchemy.exc.OperationalError,
    sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.DisconnectionError,
    sqlalchemy.exc.TimeoutError,
)


# Values the database or its driver cannot hold (out of range, bad text):
# the data's fault, not the database's.
_UNSTORABLE: Final = (
    sqlite3.DataError,
    sqlalchemy.exc.DataError,
    OverflowError,  # sqlite3: "Python int too large to convert to SQLite INTEGER"
    UnicodeError,
    ValueError,
    TypeError,
)


_PSYCOPG_UNAVAILABLE: Final = ("OperationalError", "InterfaceError")
_PSYCOPG_UNSTORABLE: Final = ("DataError",)


def _psycopg(names: tuple[str, ...]) -> tuple[type[BaseException], ...]:
    """psycopg's exception classes of these names, or none while it is not loaded."""
    module = sys.modules.get("psycopg")
    return tuple(getattr(module, name) for name in names) if module is not None else ()


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
    unavailable = _UNAVAILABLE + _psycopg(_PSYCOPG_UNAVAILABLE)
    return isinstance(exc, unavailable) and not _is_statement_error(exc)


def _is_statement_error(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+: SQLite's extended code
    return (
        isinstance(exc, sqlite3.Error)
        and code is not None
        and code & 0xFF == (_SQLITE_STATEMENT_ERROR)
    )


def is_unstorable(exc: BaseException) -> bool:
    """Whether a failed write says a value in its data cannot be stored."""
    unstorable = _UNSTORABLE + _psycopg(_PSYCOPG_UNSTORABLE)
    if isinstance(exc, sqlalchemy.exc.StatementError) and exc.orig is not None:
        return isinstance(exc.orig, unstorable)
    return isinstance(exc, unstorable)

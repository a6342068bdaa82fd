"""The only module with dialect-specific SQL: ON CONFLICT, paramstyles, locks.

The hot paths (span batches, run upserts, fact loads) go straight to the
DB-API cursor with tuples: SQLAlchemy's per-row parameter processing cost
more than the insert itself (PERFORMANCE.md; measured in bench/ingest.py).

Several processes on one PostgreSQL database: every transaction that writes a
trace's spans or runs first row-locks that trace's `trace_locks` row (an
upsert, all of a transaction's traces in one statement, sorted, so two
transactions never wait on each other in a cycle). Per-trace work is then
serialised exactly as SQLite's single writer serialises it: a run computed
from N spans is checked against the stored count and written with no insert
of that trace in between, and "no span of this trace is stored yet" (the
single-request fast path) stays true until the commit. Row locks rather than
`pg_advisory_xact_lock`: a 20,000-span batch can touch thousands of traces,
and advisory locks live in the bounded shared lock table while row locks
live in the rows. Other row waits (agents, runs) happen in sorted order too;
span retention skips lock rows in use. The one cycle left open needs one
`badge.run.id` reused across two traces written by two processes at the
same instant; PostgreSQL then aborts one transaction, whose exports get a
retryable 503: nothing is lost.
Advisory locks remain for two one-per-database roles: setup (migrations and
the first key; a transaction lock) and the sweeper (a session lock held by
one process, `try_advisory_lock`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    text,
)
from sqlalchemy.engine import Connection


def _marker(conn: Connection) -> str:
    return "?" if conn.dialect.paramstyle == "qmark" else "%s"


def cursor(conn: Connection) -> Any:
    """The DB-API cursor of this connection, inside its current transaction."""
    return conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]


def insert_ignore_rows(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """Insert tuples; a row whose unique key exists already is skipped."""
    if not rows:
        return
    if is_postgresql(conn) and len(rows) >= _COPY_MIN_ROWS:
        _insert_copied(conn, table, columns, rows, "ON CONFLICT DO NOTHING")
        return
    marks = ", ".join([_marker(conn)] * len(columns))
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING"
    cursor(conn).executemany(sql, rows)


def upsert_rows(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    key: Sequence[str],
) -> None:
    """Insert tuples, or overwrite every non-key column of the existing row."""
    if not rows:
        return
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    conflict = f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}"
    if is_postgresql(conn) and len(rows) >= _COPY_MIN_ROWS:
        # One statement may not update a row twice: the last row per key wins,
        # as it would in a sequence of upserts.
        where = [columns.index(name) for name in key]
        last = {tuple(row[i] for i in where): row for row in rows}
        _insert_copied(conn, table, columns, list(last.values()), conflict)
        return
    marks = ", ".join([_marker(conn)] * len(columns))
    sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks}) {conflict}"
    cursor(conn).executemany(sql, rows)


# PostgreSQL: from this many rows on, binary COPY into a per-session staging
# table and one INSERT ... SELECT beat executemany's statement per row
# (bench/ingest.py --store postgresql; about 1.4x on span rows).
_COPY_MIN_ROWS: Final = 32
_BINARY_TYPES: Final = (
    (SmallInteger, "int2"),
    (BigInteger, "int8"),
    (Integer, "int4"),
    (Float, "float8"),
    (Boolean, "bool"),
    (LargeBinary, "bytea"),
    (String, "text"),
)


def _binary_type(table: Table, column: str) -> str:
    declared = table.c[column].type
    for kind, name in _BINARY_TYPES:
        if isinstance(declared, kind):
            return name
    raise TypeError(f"no COPY type for {table.name}.{column} ({declared})")


def _insert_copied(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    conflict: str,
) -> None:
    """Rows in by binary COPY, then into the table in one statement, in order."""
    names = ", ".join(columns)
    staging = f"_staged_{table.name}"
    cur = cursor(conn)
    cur.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {staging} ON COMMIT DELETE ROWS AS "
        f"SELECT {names} FROM {table.name} WITH NO DATA"
    )
    with cur.copy(f"COPY {staging} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([_binary_type(table, c) for c in columns])
        for row in rows:
            copy.write_row(row)
    cur.execute(
        f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {staging} "
        f"ORDER BY {columns[0]} {conflict}"
    )
    cur.execute(f"DELETE FROM {staging}")  # cheaper than TRUNCATE; emptied at commit anyway


def select_in(
    conn: Connection,
    table: Table,
    columns: Sequence[str],
    equal: dict[str, Any],
    in_column: str,
    values: Sequence[Any],
) -> list[tuple[Any, ...]]:
    """SELECT columns WHERE equal... AND in_column IN (values), as plain tuples."""
    mark = _marker(conn)
    where = [f"{name} = {mark}" for name in equal]
    where.append(f"{in_column} IN ({', '.join([mark] * len(values))})")
    sql = f"SELECT {', '.join(columns)} FROM {table.name} WHERE {' AND '.join(where)}"
    cur = cursor(conn)
    cur.execute(sql, (*equal.values(), *values))
    rows: list[tuple[Any, ...]] = cur.fetchall()
    return rows


def is_postgresql(conn: Connection) -> bool:
    return conn.dialect.name == "postgresql"


def lock_traces(conn: Connection, traces: Iterable[tuple[str, str]], now: float) -> None:
    """Hold every (owner, trace id) of this transaction until it ends (PostgreSQL).

    SQLite needs nothing: BEGIN IMMEDIATE already holds the database lock.
    """
    if not is_postgresql(conn):
        return
    ordered = sorted(set(traces))
    if not ordered:
        return
    cursor(conn).execute(
        "INSERT INTO trace_locks (owner, trace_id, touched_at) "
        "SELECT o, t, %s FROM unnest(%s::text[], %s::text[]) AS k(o, t) ORDER BY o, t "
        "ON CONFLICT (owner, trace_id) DO UPDATE SET touched_at = excluded.touched_at",
        (now, [o for o, _ in ordered], [t for _, t in ordered]),
    )


def delete_unused_trace_locks(conn: Connection, older_than: float) -> None:
    """Retention of lock rows, never waiting on one a writer holds right now.

    A writer that holds a lock row may be waiting for this transaction (a
    duplicate of a span being deleted): waiting for it in turn would be a cycle.
    """
    if not is_postgresql(conn):
        conn.execute(text("DELETE FROM trace_locks WHERE touched_at < :t"), {"t": older_than})
        return
    conn.execute(
        text(
            "DELETE FROM trace_locks WHERE (owner, trace_id) IN (SELECT owner, trace_id "
            "FROM trace_locks WHERE touched_at < :t FOR UPDATE SKIP LOCKED)"
        ),
        {"t": older_than},
    )


# Keys of the session/transaction advisory locks (PostgreSQL), one per role.
SETUP_LOCK: Final = 0x6261646765_01  # "badge" 1
SWEEPER_LOCK: Final = 0x6261646765_02


def lock_for_setup(conn: Connection) -> None:
    """Processes starting together on one empty database migrate it and create
    the first key one after the other (held until this transaction ends)."""
    if is_postgresql(conn):
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": SETUP_LOCK})


def try_advisory_lock(conn: Connection, key: int) -> bool:
    """Take a session lock if free (held until unlocked or the connection ends)."""
    if not is_postgresql(conn):
        return True
    return bool(conn.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}).scalar())


def advisory_unlock(conn: Connection, key: int) -> None:
    if is_postgresql(conn):
        conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})

"""The only module with dialect-specific SQL: native ON CONFLICT, paramstyles.

The hot paths (span batches, run upserts, fact loads) go straight to the
DB-API cursor with tuples: SQLAlchemy's per-row parameter processing cost
more than the insert itself (PERFORMANCE.md; measured in bench/ingest.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
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
    marks = ", ".join([_marker(conn)] * len(columns))
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)
    sql = (
        f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks}) "
        f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {updates}"
    )
    cursor(conn).executemany(sql, rows)


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

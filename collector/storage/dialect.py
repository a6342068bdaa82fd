"""The only module with dialect-specific SQL: native ON CONFLICT per dialect."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection


def _insert(conn: Connection, table: Table) -> Any:
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def insert_ignore(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows; a row whose unique key exists already is skipped."""
    if rows:
        conn.execute(_insert(conn, table).on_conflict_do_nothing(), list(rows))


def upsert(
    conn: Connection, table: Table, rows: Sequence[dict[str, Any]], key: Sequence[str]
) -> None:
    """Insert rows, or overwrite every non-key column of the existing row."""
    if not rows:
        return
    statement = _insert(conn, table)
    columns = [c for c in rows[0] if c not in key]
    statement = statement.on_conflict_do_update(
        index_elements=list(key), set_={c: statement.excluded[c] for c in columns}
    )
    conn.execute(statement, list(rows))

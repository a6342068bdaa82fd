"""PostgreSQL: many rows in by binary COPY into a per-session staging table,
then into their table in one INSERT ... SELECT.

From `COPY_MIN_ROWS` rows on this beats executemany's statement per row
(bench/ingest.py --store postgresql; about 1.4x on span rows).
"""

from __future__ import annotations

from collections.abc import Sequence
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
)

COPY_MIN_ROWS: Final = 32
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


def staging(table: Table) -> str:
    """This session's staging table for `table` (a temp table, emptied at commit)."""
    return f"_staged_{table.name}"


def insert_copied(
    cur: Any,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    conflict: str,
) -> None:
    """Rows in by binary COPY, then into the table in one statement, in order."""
    names = ", ".join(columns)
    copied_then(
        cur,
        table,
        columns,
        rows,
        f"INSERT INTO {table.name} ({names}) SELECT {names} FROM {staging(table)} "
        f"ORDER BY {columns[0]} {conflict}",
    )


def copied_then(
    cur: Any,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    statement: str,
) -> None:
    """Binary COPY rows into the staging table, run `statement` (an INSERT ...
    SELECT from it), and empty it again."""
    names = ", ".join(columns)
    staged = staging(table)
    cur.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {staged} ON COMMIT DELETE ROWS AS "
        f"SELECT {names} FROM {table.name} WITH NO DATA"
    )
    with cur.copy(f"COPY {staged} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types([_binary_type(table, c) for c in columns])
        for row in rows:
            copy.write_row(row)
    cur.execute(statement)
    cur.execute(f"DELETE FROM {staged}")  # cheaper than TRUNCATE; emptied at commit anyway

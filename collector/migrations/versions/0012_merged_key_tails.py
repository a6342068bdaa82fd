"""New traces and runs reach their random-keyed indexes in bulk (SQLite).

Each new trace put one entry into the (owner, trace_id) index and each new
run one into the runs' id index, each on a random page; once those indexes
outgrew a commit, every commit wrote a whole page per new trace and per new
run, and ingest fell as the store grew (bench/ingest.py --growing: 23.6k
spans/s with 256k spans stored, 12.4k to 14.9k at 1.8M to 2.0M). Rows are
now written with `merged` false, outside those indexes (partial indexes on
SQLite), found through the writer's memory (storage/sqlite/key_tail.py) and
merged in bulk by the sweeper. `traces` and `runs` become AUTOINCREMENT
tables, so a number is never given to a second row, and runs get `seq`, a
row number, as their key. PostgreSQL keeps indexing every row at once
(several processes insert), so there the columns are added and `merged`
stays true.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.engine import Connection

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_MERGED = "merged = 1"
_UNMERGED = "merged = 0"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        _upgrade_postgresql()
    else:
        _rebuild_sqlite(bind, "traces", _traces_forward)
        _rebuild_sqlite(bind, "runs", _runs_forward)
    op.create_table(
        "key_merges",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
    )
    op.execute("INSERT INTO key_merges (id, generation) VALUES (1, 0)")


def downgrade() -> None:
    bind = op.get_bind()
    op.drop_table("key_merges")
    if bind.dialect.name == "postgresql":
        _downgrade_postgresql()
        return
    op.execute("UPDATE traces SET merged = 1 WHERE merged = 0")
    op.execute("UPDATE runs SET merged = 1 WHERE merged = 0")
    _rebuild_sqlite(bind, "traces", _traces_back)
    _rebuild_sqlite(bind, "runs", _runs_back)


def _merged_column() -> sa.Column[Any]:
    return sa.Column("merged", sa.Boolean(), nullable=False, server_default=sa.text("true"))


def _upgrade_postgresql() -> None:
    op.add_column("traces", _merged_column())
    op.create_index("ux_traces_owner_trace", "traces", ["owner", "trace_id"], unique=True)
    op.drop_constraint("uq_traces_owner_trace", "traces", type_="unique")
    op.create_index("ix_traces_unmerged", "traces", ["id"], postgresql_where=sa.text("NOT merged"))
    op.add_column("runs", _merged_column())
    op.execute("ALTER TABLE runs ADD COLUMN seq BIGSERIAL")
    op.create_index("ux_runs_id", "runs", ["id"], unique=True)
    op.drop_constraint("runs_pkey", "runs", type_="primary")
    op.create_primary_key("runs_pkey", "runs", ["seq"])
    op.create_index("ix_runs_unmerged", "runs", ["seq"], postgresql_where=sa.text("NOT merged"))


def _downgrade_postgresql() -> None:
    op.drop_index("ix_runs_unmerged", table_name="runs")
    op.drop_constraint("runs_pkey", "runs", type_="primary")
    op.create_primary_key("runs_pkey", "runs", ["id"])
    op.drop_index("ux_runs_id", table_name="runs")
    op.drop_column("runs", "seq")
    op.drop_column("runs", "merged")
    op.drop_index("ix_traces_unmerged", table_name="traces")
    op.create_unique_constraint("uq_traces_owner_trace", "traces", ["owner", "trace_id"])
    op.drop_index("ux_traces_owner_trace", table_name="traces")
    op.drop_column("traces", "merged")


# A rebuild: the reflected columns -> the new table's columns, the indexes
# to create after the copy, and whether the table is AUTOINCREMENT.
Columns = list[sa.Column[Any]]
Rebuilt = tuple[Columns, list[str], bool]
Shape = Callable[[Columns], Rebuilt]


def _traces_forward(columns: Columns) -> Rebuilt:
    return (
        [*columns, _merged_column()],
        [
            "CREATE UNIQUE INDEX ux_traces_owner_trace ON traces (owner, trace_id) "
            f"WHERE {_MERGED}",
            f"CREATE INDEX ix_traces_unmerged ON traces (id) WHERE {_UNMERGED}",
        ],
        True,
    )


def _traces_back(columns: Columns) -> Rebuilt:
    kept = [c for c in columns if c.name != "merged"]
    return kept, ["CREATE UNIQUE INDEX uq_traces_owner_trace ON traces (owner, trace_id)"], False


def _runs_forward(columns: Columns) -> Rebuilt:
    for column in columns:
        column.primary_key = False
    seq = sa.Column("seq", sa.Integer(), primary_key=True, autoincrement=True)
    return (
        [seq, *columns, _merged_column()],
        [
            f"CREATE UNIQUE INDEX ux_runs_id ON runs (id) WHERE {_MERGED}",
            f"CREATE INDEX ix_runs_unmerged ON runs (seq) WHERE {_UNMERGED}",
        ],
        True,
    )


def _runs_back(columns: Columns) -> Rebuilt:
    kept = [c for c in columns if c.name not in ("seq", "merged")]
    for column in kept:
        column.primary_key = column.name == "id"
    return kept, [], False


def _rebuild_sqlite(bind: Connection, name: str, shape: Shape) -> None:
    """SQLite cannot change a table's key in place: a new table, the rows
    copied in their order, the old one dropped and the new one renamed; its
    other indexes and its triggers (migration 0009) are made again as they
    were (their SQL from sqlite_master)."""
    old = sa.Table(name, sa.MetaData(), autoload_with=bind)
    reflected = [
        sa.Column(
            c.name,
            c.type,
            primary_key=c.primary_key,
            nullable=c.nullable,
            server_default=None if c.server_default is None else sa.text(str(c.server_default.arg)),  # type: ignore[attr-defined]
        )
        for c in old.columns
    ]
    copied = [c.name for c in reflected]
    columns, new_indexes, autoincrement = shape(reflected)
    copied = [c for c in copied if c in {column.name for column in columns}]
    kept_sql = [
        sql
        for (sql,) in bind.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
            "AND type IN ('index', 'trigger') ORDER BY type, name",
            (name,),
        )
        if not _replaced(sql)
    ]
    staging = f"_{name}_rebuilt"
    sa.Table(staging, sa.MetaData(), *columns, sqlite_autoincrement=autoincrement).create(bind)
    listed = ", ".join(copied)
    op.execute(f"INSERT INTO {staging} ({listed}) SELECT {listed} FROM {name} ORDER BY rowid")
    op.execute(f"DROP TABLE {name}")
    op.execute(f"ALTER TABLE {staging} RENAME TO {name}")
    for sql in [*kept_sql, *new_indexes]:
        op.execute(sql)


def _replaced(sql: str) -> bool:
    """The key indexes this migration makes or unmakes (each way)."""
    names = (
        "ux_traces_owner_trace",
        "ix_traces_unmerged",
        "uq_traces_owner_trace",
        "ux_runs_id",
        "ix_runs_unmerged",
    )
    return any(f"INDEX {index} " in sql for index in names)

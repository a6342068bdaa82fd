"""The indexes of rows not merged yet carry the keys they are searched by.

A process without the writer's memory of those rows (a reader, another
collector process) finds a trace or run among them by scanning them in
number order (storage/sqlite/lookups.py). With the index holding the number only,
each scanned row was read from the table as well: about 130 ns a row
against 35 ns from an index that holds the key too (3,876 unmerged runs of
a 3.8M-span store: 0.50 ms and 0.13 ms a lookup). Merges now wait for a
larger tail (storage/sqlite/lookups.py MERGE_SHARE), so the scan got longer and
this matters more. The indexes are small (the tail only), so rebuilding them
costs little; on PostgreSQL they stay empty (every row is merged there).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

# (index, table, columns before, columns after)
_INDEXES = (
    ("ix_traces_unmerged", "traces", ["id"], ["id", "owner", "trace_id", "merged"]),
    ("ix_runs_unmerged", "runs", ["seq"], ["seq", "id", "merged"]),
)


def upgrade() -> None:
    for name, table, _before, after in _INDEXES:
        _replace(name, table, after)


def downgrade() -> None:
    for name, table, before, _after in _INDEXES:
        _replace(name, table, before)


def _replace(name: str, table: str, columns: list[str]) -> None:
    op.drop_index(name, table_name=table)
    op.create_index(
        name,
        table,
        columns,
        sqlite_where=sa.text("merged = 0"),
        postgresql_where=sa.text("NOT merged"),
    )

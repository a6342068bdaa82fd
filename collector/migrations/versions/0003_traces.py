"""Traces numbered in order of first sight; spans keyed by that number.

The span identity index was (owner, trace_id, span_id): random trace ids put
every new span on a random index page, and each such page is written whole
to the WAL and again at checkpoint. Keyed by (trace_ref, span_id) it grows at
its right edge. `traces` also replaces `trace_locks` as PostgreSQL's per-trace
lock row. Existing spans are numbered here, one trace at a time.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "traces",
        sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("touched_at", sa.Float(), nullable=False),
        sa.UniqueConstraint("owner", "trace_id", name="uq_traces_owner_trace"),
    )
    op.execute(
        "INSERT INTO traces (owner, trace_id, touched_at) "
        "SELECT owner, trace_id, MAX(received_at) FROM spans "
        "GROUP BY owner, trace_id ORDER BY MIN(received_at), owner, trace_id"
    )
    # NOT NULL needs a default for the rows already there; every insert sets
    # the column, and SQLite cannot drop a default without rebuilding the table.
    op.add_column("spans", sa.Column("trace_ref", ROW_ID, nullable=False, server_default="0"))
    op.execute(
        "UPDATE spans SET trace_ref = (SELECT id FROM traces "
        "WHERE traces.owner = spans.owner AND traces.trace_id = spans.trace_id)"
    )
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column("spans", "trace_ref", server_default=None)
    op.drop_index("ux_spans_identity", table_name="spans")
    op.create_index("ux_spans_identity", "spans", ["trace_ref", "span_id"], unique=True)
    op.drop_table("trace_locks")


def downgrade() -> None:
    op.create_table(
        "trace_locks",
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("trace_id", sa.String(32), primary_key=True),
        sa.Column("touched_at", sa.Float(), nullable=False),
    )
    op.drop_index("ux_spans_identity", table_name="spans")
    op.create_index("ux_spans_identity", "spans", ["owner", "trace_id", "span_id"], unique=True)
    with op.batch_alter_table("spans") as batch:
        batch.drop_column("trace_ref")
    op.drop_table("traces")

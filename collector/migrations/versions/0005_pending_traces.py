"""Traces whose runs are not recomputed yet, recorded with their spans.

A process killed after committing spans but before recomputing their runs
left those runs stale until their timeout; marks in `pending_traces` are
written in the spans' transaction and swept at start.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "pending_traces",
        sa.Column("trace_ref", ROW_ID, primary_key=True, autoincrement=False),
        sa.Column("marked_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("pending_traces")

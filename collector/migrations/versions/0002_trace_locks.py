"""Trace lock rows: several collector processes on one PostgreSQL database.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "trace_locks",
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("trace_id", sa.String(32), primary_key=True),
        sa.Column("touched_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("trace_locks")

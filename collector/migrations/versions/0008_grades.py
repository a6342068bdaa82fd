"""Graded outcomes (docs/loop.md "Graded outcomes and verified_state").

`grades` holds what a screening harness posted; `runs.evaluation` what the
spans said (an evaluation event's score and explanation); `ix_runs_graded`
counts graded runs for /stats without widening the totals index. Existing
runs get NULL and gain their evaluation when next recomputed.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_GRADED = sa.text("success_source = 'graded'")


def upgrade() -> None:
    op.create_table(
        "grades",
        sa.Column("run_id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("agent", sa.Text(), nullable=False),
        sa.Column("run_key", sa.Text(), nullable=False),
        sa.Column("success", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("expected_output", sa.Text(), nullable=True),
        sa.Column("output", sa.Text(), nullable=True),
        sa.Column("error_class", sa.Text(), nullable=True),
        sa.Column("graded_at", sa.Float(), nullable=False),
    )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("evaluation", sa.Text(), nullable=True))
    op.create_index(
        "ix_runs_graded",
        "runs",
        ["agent_id", "status", "version", "terminal_at"],
        sqlite_where=_GRADED,
        postgresql_where=_GRADED,
    )


def downgrade() -> None:
    op.drop_index("ix_runs_graded", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("evaluation")
    op.drop_table("grades")

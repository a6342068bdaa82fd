"""Runs carry the agent version they ran (docs/runs.md "The fields of a run").

Existing runs get NULL; each gets its version when next recomputed (a new
span, a timer, a pending recomputation). Two indexes serve the per-version
views of one agent: their sums, covered, and each version's newest runs.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("version", sa.Text(), nullable=True))
    op.create_index(
        "ix_runs_agent_version_totals",
        "runs",
        [
            "agent_id",
            "version",
            "status",
            "cost_source",
            "success",
            "task_id",
            "latency_ms",
            "cost_usd",
            "started_ns",
        ],
    )
    op.create_index(
        "ix_runs_agent_version_terminal", "runs", ["agent_id", "version", "terminal_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_runs_agent_version_terminal", table_name="runs")
    op.drop_index("ix_runs_agent_version_totals", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("version")

"""A screening's plan: the rounds and tasks it was to dispatch (docs/screening.md).

A screening was only the runs that named it, so one that lost runs (a
collector or database outage, a screener killed) looked finished: 34 runs
in 4 rounds of 6, with nothing saying 60 were sent (issue 37 item 5). The
screener now records its plan through a grader key before its first
dispatch; a screening with a plan is complete once a run is stored for
every planned task and round. The plan's task ids are rows of their own,
so the list of screenings counts what is stored in one query.

Revision ID: 0020
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "screening_plans",
        sa.Column("agent_id", sa.String(36), nullable=False),
        sa.Column("screening_id", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("agent", sa.Text(), nullable=False),
        sa.Column("suite_name", sa.Text()),
        sa.Column("suite_digest", sa.Text()),
        sa.Column("version", sa.Text()),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("tasks", sa.Integer(), nullable=False),
        sa.Column("planned_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("agent_id", "screening_id", name="pk_screening_plans"),
    )
    op.create_table(
        "screening_plan_tasks",
        sa.Column("agent_id", sa.String(36), nullable=False),
        sa.Column("screening_id", sa.String(64), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint(
            "agent_id", "screening_id", "task_id", name="pk_screening_plan_tasks"
        ),
    )


def downgrade() -> None:
    op.drop_table("screening_plan_tasks")
    op.drop_table("screening_plans")

"""Runs whose spans retention removed are sealed: kept as they were stored.

Retention deletes spans by age and keeps runs, so a run's summary and
scores outlive its spans (docs/operations.md "Retention"). Without a mark,
a late span of such a trace made the run be recomputed from what was left
(the late span alone) and rewrote it: a failed run with five spans, three
steps and $0.50 became a successful one-span run with no cost. `sealed_at`
(the collector's clock when retention first removed a span of the run's
trace) makes every later write leave the run alone; a late span can still
add a run of its own.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("sealed_at", sa.Float(), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "sealed_at")

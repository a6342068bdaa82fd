"""Runs are found by their trace's number, not by (owner, trace_id).

(owner, trace_id) is a random key: every new run put its index entry on a
random page of an index as large as the runs, and each commit wrote every
such page whole (bench/ingest.py --growing). A trace's number (traces.id)
grows as traces arrive, so the new entries are appended.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    row_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("trace_ref", row_id, nullable=True))
    # Not a column the kept sums read: the update trigger adds no change.
    op.execute(
        "UPDATE runs SET trace_ref = (SELECT id FROM traces "
        "WHERE traces.owner = runs.owner AND traces.trace_id = runs.trace_id)"
    )
    op.create_index("ix_runs_trace_ref", "runs", ["trace_ref"])
    op.drop_index("ix_runs_trace", table_name="runs")


def downgrade() -> None:
    op.create_index("ix_runs_trace", "runs", ["owner", "trace_id"])
    op.drop_index("ix_runs_trace_ref", table_name="runs")
    # Not a batch: SQLite would rebuild the table and lose 0009's triggers.
    op.drop_column("runs", "trace_ref")

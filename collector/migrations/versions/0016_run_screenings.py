"""Runs carry the screening they belong to (docs/screening.md).

A screened run's root says which screening, round and suite it was part of;
the views filter and group by it (`screening=` on the run views, the
screening pages, compare by screening), so it is stored on the run like its
version, with an index for a screening's runs in cohort order.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_COLUMNS = (
    ("screening_id", sa.Text()),
    ("screening_round", sa.Integer()),
    ("suite_name", sa.Text()),
    ("suite_digest", sa.Text()),
)


def upgrade() -> None:
    for name, kind in _COLUMNS:
        op.add_column("runs", sa.Column(name, kind, nullable=True))
    op.create_index(
        "ix_runs_agent_screening_terminal", "runs", ["agent_id", "screening_id", "terminal_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_runs_agent_screening_terminal", table_name="runs")
    for name, _ in reversed(_COLUMNS):
        op.drop_column("runs", name)

"""Runs say where their steps came from (RUNS.md "Run fields": steps_source).

A run whose instrumentation emits no tool span (only the model client is
instrumented, or Haystack's Agent through OpenInference) takes as its steps
the tool calls its LLM calls requested; `steps_source` says `requested`
then, and `spans` when the steps are counted tool spans. Null when `steps`
is, and for runs stored before this revision (until they are recomputed).

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("steps_source", sa.String(16), nullable=True))


def downgrade() -> None:
    op.drop_column("runs", "steps_source")

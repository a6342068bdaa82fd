"""Runs record how their spans were recognised (CONVENTIONS.md sections 4, 6).

Recognition became data: convention files, built-in and the user's, decide
which span is a tool step, an LLM call or an agent. A run now records the
digest of the conventions its spans were classified under (so a changed set
can be told from the one a run was counted with) and how many of its spans
no convention recognised, the root excepted (a zero that may be a blind
spot, rather than no tool at all). Runs stored before have neither: null.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None

_COLUMNS = (
    ("unrecognised_spans", sa.Integer()),
    ("conventions_digest", sa.String(16)),
)


def upgrade() -> None:
    for name, kind in _COLUMNS:
        op.add_column("runs", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    for name, _ in reversed(_COLUMNS):
        op.drop_column("runs", name)

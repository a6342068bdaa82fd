"""Each owner's saved radar weights (docs/loop.md "Personal radar weights").

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "radar_weights",
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("weights", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("radar_weights")

"""An agent's name as text of any length (docs/otlp.md "Limits": a resource
attribute may run to 16 KiB).

`agents.name` was VARCHAR(500): on PostgreSQL a longer `service.name` made
the database refuse the whole batch, so the export got 400 and the other
agents in it were refused with it; SQLite never enforced the length, so the
two databases disagreed about which exports they store. On SQLite the column
type is only a name, rewritten so the schema says what the tables hold (a
copy of the agents table, one row per agent).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        batch.alter_column("name", type_=sa.Text(), existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("agents") as batch:
        batch.alter_column(
            "name",
            type_=sa.String(500),
            existing_nullable=False,
            postgresql_using="left(name, 500)",
        )

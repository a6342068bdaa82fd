"""PostgreSQL: vacuum the span tables by a small share of dead rows.

Retention deletes every day what ingest added a month before. With the
default (a fifth of a table dead before autovacuum comes) the freed space
waited, and the tables kept growing at a steady state: 1.5x to 2.1x their
live rows over five cycles of bench/retention.py. Vacuuming at 1% lets new
rows reuse the space soon after each pass. Nothing to do on SQLite, which
reuses freed pages at once.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

TABLES = ("spans", "traces", "resources")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(
            f"ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0.01, "
            "autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_vacuum_cost_delay = 0)"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in TABLES:
        op.execute(
            f"ALTER TABLE {table} RESET (autovacuum_vacuum_scale_factor, "
            "autovacuum_vacuum_insert_scale_factor, autovacuum_vacuum_cost_delay)"
        )

"""The leaderboard kept per agent (storage/board.py).

The board loaded every agent and, re-ranked by viewer weights, read every
agent's radar cohort: one query per agent, 90 s for one request at 100,000
agents (issue 29). The sweeper now keeps one row per agent with what the
board shows and ranks by, refreshed when the agent's runs change; every
agent is marked for a first refresh here.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_board",
        sa.Column("agent_id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("listed", sa.Boolean(), nullable=False),
        sa.Column("total_runs", sa.BigInteger(), nullable=False),
        sa.Column("completed_runs", sa.BigInteger(), nullable=False),
        sa.Column("successful_runs", sa.BigInteger(), nullable=False),
        sa.Column("graded_runs", sa.BigInteger(), nullable=False),
        sa.Column("last_run_at", sa.Float()),
        sa.Column("composite_score", sa.Float()),
        sa.Column("success_rate", sa.Float()),
        sa.Column("correctness", sa.Float()),
        sa.Column("latency", sa.Float()),
        sa.Column("cost", sa.Float()),
        sa.Column("tool_efficiency", sa.Float()),
        sa.Column("robustness", sa.Float()),
        sa.Column("radar_runs", sa.Integer(), nullable=False),
        sa.Column("trend", sa.Text(), nullable=False),
        sa.Column("refreshed_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_agent_board_rank", "agent_board", ["composite_score", "name", "agent_id"])
    op.create_index("ix_agent_board_recent", "agent_board", ["last_run_at"])
    op.create_table("board_stale", sa.Column("agent_id", sa.String(36), primary_key=True))
    op.execute("INSERT INTO board_stale (agent_id) SELECT id FROM agents")


def downgrade() -> None:
    op.drop_table("board_stale")
    op.drop_index("ix_agent_board_recent", table_name="agent_board")
    op.drop_index("ix_agent_board_rank", table_name="agent_board")
    op.drop_table("agent_board")

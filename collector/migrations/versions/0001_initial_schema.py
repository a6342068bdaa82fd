"""The first schema: keys, agents, spans, runs.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "keys",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("revoked_at", sa.Float()),
    )
    op.create_table(
        "agents",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("first_seen_at", sa.Float(), nullable=False),
        sa.Column("deleted_at", sa.Float()),
        sa.UniqueConstraint("owner", "name", name="uq_agents_owner_name"),
    )
    op.create_table(
        "spans",
        # BIGSERIAL on PostgreSQL, the rowid alias on SQLite (where this
        # revision first ran; the variant changes nothing there).
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("span_id", sa.String(16), nullable=False),
        sa.Column("parent_span_id", sa.String(16), nullable=False),
        sa.Column("agent_id", sa.String(36), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("kind", sa.SmallInteger(), nullable=False),
        sa.Column("start_ns", sa.BigInteger(), nullable=False),
        sa.Column("end_ns", sa.BigInteger(), nullable=False),
        sa.Column("status_code", sa.SmallInteger(), nullable=False),
        sa.Column("status_message", sa.Text(), nullable=False),
        sa.Column("flags", sa.BigInteger(), nullable=False),
        sa.Column("scope_name", sa.Text(), nullable=False),
        sa.Column("received_at", sa.Float(), nullable=False),
        sa.Column("grader", sa.Boolean(), nullable=False),
        sa.Column("role", sa.String(8), nullable=False),
        sa.Column("rule", sa.Text(), nullable=False),
        sa.Column("facts", sa.Text(), nullable=False),
        sa.Column("encoded", sa.LargeBinary(), nullable=False),
        sa.Column("resource", sa.LargeBinary(), nullable=False),
    )
    op.create_index("ux_spans_identity", "spans", ["owner", "trace_id", "span_id"], unique=True)
    op.create_table(
        "runs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("agent_id", sa.String(36), nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("run_key", sa.Text(), nullable=False),
        sa.Column("root_span_id", sa.String(16)),
        sa.Column("task_id", sa.Text()),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("success", sa.Boolean()),
        sa.Column("success_source", sa.String(16)),
        sa.Column("started_ns", sa.BigInteger(), nullable=False),
        sa.Column("ended_ns", sa.BigInteger(), nullable=False),
        sa.Column("latency_ms", sa.Float()),
        sa.Column("steps", sa.Integer()),
        sa.Column("tool_errors", sa.Integer(), nullable=False),
        sa.Column("llm_calls", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger()),
        sa.Column("output_tokens", sa.BigInteger()),
        sa.Column("cost_usd", sa.Float()),
        sa.Column("cost_source", sa.String(16)),
        sa.Column("error_class", sa.Text(), nullable=False),
        sa.Column("span_count", sa.Integer(), nullable=False),
        sa.Column("has_agent_span", sa.Boolean(), nullable=False),
        sa.Column("last_received_at", sa.Float(), nullable=False),
        sa.Column("check_at", sa.Float()),
        sa.Column("terminal_at", sa.Float()),
        sa.Column("tool_calls", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_runs_trace", "runs", ["owner", "trace_id"])
    op.create_index("ix_runs_agent_started", "runs", ["agent_id", "started_ns"])
    op.create_index("ix_runs_agent_terminal", "runs", ["agent_id", "terminal_at"])
    op.create_index(
        "ix_runs_agent_totals",
        "runs",
        ["agent_id", "status", "cost_source", "success", "task_id", "latency_ms", "cost_usd"],
    )
    op.create_index("ix_runs_check", "runs", ["check_at"])


def downgrade() -> None:
    for table in ("runs", "spans", "agents", "keys"):
        op.drop_table(table)

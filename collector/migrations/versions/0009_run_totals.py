"""Per-agent run sums kept as runs change (run_totals + run_deltas).

Every write of a run (insert, upsert, the grade update, a delete) adds its
change to `run_deltas` through a trigger, in the writer's transaction; the
sweeper folds them into `run_totals`. The headline views then read a few
rows per agent instead of every run (1M runs: a scan took ~300 ms), and the
two covering indexes that served those scans go.
Existing runs are summed into run_totals here.

A trigger, not the Python writers: it sees the old row of an upsert and of
the grade update, and every path that writes runs, present or future.
The placeholder rows of the PostgreSQL session's hold_runs (status 'held') never count.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

KEY = ("agent_id", "version_key", "status", "cost_source_key", "success_key", "task_key")
SUMS = (
    "runs",
    "latency_sum",
    "latency_n",
    "cost_sum",
    "graded",
    "listed",
    "first_started",
    "last_started",
)
COLUMNS = ", ".join(KEY + SUMS)
# What one run row adds; ROW is NEW or OLD, SIGN 1 or -1. A removal leaves
# first/last started as they were (NULL: min/max ignore it).
CHANGE = """{row}.agent_id,
    CASE WHEN {row}.version IS NULL THEN '' ELSE '=' || {row}.version END,
    {row}.status,
    COALESCE({row}.cost_source, ''),
    CASE WHEN {row}.success IS NULL THEN 2 WHEN {row}.success THEN 1 ELSE 0 END,
    CASE WHEN {row}.task_id IS NULL THEN '' ELSE '=' || {row}.task_id END,
    {sign},
    {sign} * COALESCE({row}.latency_ms, 0),
    CASE WHEN {row}.latency_ms IS NULL THEN 0 ELSE {sign} END,
    {sign} * COALESCE({row}.cost_usd, 0),
    CASE WHEN {row}.success_source = 'graded' THEN {sign} ELSE 0 END,
    CASE WHEN {row}.task_id IS NOT NULL OR {row}.has_agent_span THEN {sign} ELSE 0 END,
    {started},
    {started}"""
# An update that changes none of these changes no sum (most recomputations of
# a finished run): no delta rows.
COUNTED = (
    "agent_id",
    "version",
    "status",
    "cost_source",
    "success",
    "task_id",
    "latency_ms",
    "cost_usd",
    "success_source",
    "has_agent_span",
    "started_ns",
)
CHANGED = " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in COUNTED)
HELD = "'held'"


def _change(row: str, sign: int) -> str:
    started = f"{row}.started_ns" if sign > 0 else "NULL"
    return CHANGE.format(row=row, sign=sign, started=started)


def _sqlite_triggers() -> list[str]:
    changed = CHANGED.replace("IS DISTINCT FROM", "IS NOT")
    insert = f"INSERT INTO run_deltas ({COLUMNS}) SELECT"
    return [
        "CREATE TRIGGER runs_totals_insert AFTER INSERT ON runs "
        f"WHEN NEW.status <> {HELD} BEGIN {insert} {_change('NEW', 1)}; END",
        "CREATE TRIGGER runs_totals_delete AFTER DELETE ON runs "
        f"WHEN OLD.status <> {HELD} BEGIN {insert} {_change('OLD', -1)}; END",
        f"CREATE TRIGGER runs_totals_update AFTER UPDATE ON runs WHEN {changed} BEGIN "
        f"{insert} {_change('OLD', -1)} WHERE OLD.status <> {HELD}; "
        f"{insert} {_change('NEW', 1)} WHERE NEW.status <> {HELD}; END",
    ]


def _postgresql_triggers() -> list[str]:
    insert = f"INSERT INTO run_deltas ({COLUMNS}) SELECT"
    return [
        f"""CREATE FUNCTION runs_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.status <> {HELD} THEN
        {insert} {_change("OLD", -1)};
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.status <> {HELD} THEN
        {insert} {_change("NEW", 1)};
    END IF;
    RETURN NULL;
END $$""",
        "CREATE TRIGGER runs_totals_insert AFTER INSERT ON runs FOR EACH ROW "
        "EXECUTE FUNCTION runs_totals()",
        "CREATE TRIGGER runs_totals_delete AFTER DELETE ON runs FOR EACH ROW "
        "EXECUTE FUNCTION runs_totals()",
        f"CREATE TRIGGER runs_totals_update AFTER UPDATE ON runs FOR EACH ROW WHEN ({CHANGED}) "
        "EXECUTE FUNCTION runs_totals()",
    ]


def _columns() -> list[sa.Column[object]]:
    return [
        sa.Column("agent_id", sa.String(36), nullable=False),
        sa.Column("version_key", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("cost_source_key", sa.String(16), nullable=False),
        sa.Column("success_key", sa.SmallInteger(), nullable=False),
        sa.Column("task_key", sa.Text(), nullable=False),
        sa.Column("runs", sa.BigInteger(), nullable=False),
        sa.Column("latency_sum", sa.Float(), nullable=False),
        sa.Column("latency_n", sa.BigInteger(), nullable=False),
        sa.Column("cost_sum", sa.Float(), nullable=False),
        sa.Column("graded", sa.BigInteger(), nullable=False),
        sa.Column("listed", sa.BigInteger(), nullable=False),
        sa.Column("first_started", sa.BigInteger(), nullable=True),
        sa.Column("last_started", sa.BigInteger(), nullable=True),
    ]


def upgrade() -> None:
    op.create_table("run_totals", *_columns(), sa.PrimaryKeyConstraint(*KEY, name="pk_run_totals"))
    row_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "run_deltas", sa.Column("id", row_id, primary_key=True, autoincrement=True), *_columns()
    )
    op.create_index("ix_run_deltas_agent", "run_deltas", ["agent_id"])
    postgresql = op.get_bind().dialect.name == "postgresql"
    for statement in _postgresql_triggers() if postgresql else _sqlite_triggers():
        op.execute(statement)
    if postgresql:
        # Rows live about a second (the sweeper folds them): vacuumed by a
        # fixed count of dead rows, not by a share of a table that stays small.
        op.execute(
            "ALTER TABLE run_deltas SET (autovacuum_vacuum_scale_factor = 0, "
            "autovacuum_vacuum_threshold = 10000, autovacuum_analyze_scale_factor = 0, "
            "autovacuum_analyze_threshold = 10000)"
        )
    sums = _change("r", 1).split(",\n")
    key, values = sums[:6], sums[6:]
    # Those sums were what the two covering indexes served; every insert of a
    # run wrote both at a random place (bench/ingest.py --growing).
    op.drop_index("ix_runs_agent_totals", table_name="runs")
    op.drop_index("ix_runs_agent_version_totals", table_name="runs")
    op.execute(
        f"INSERT INTO run_totals ({COLUMNS}) SELECT k0, k1, k2, k3, k4, k5, "
        "sum(v0), sum(v1), sum(v2), sum(v3), sum(v4), sum(v5), min(v6), max(v7) FROM ("
        f"SELECT {', '.join(f'{e.strip()} AS k{i}' for i, e in enumerate(key))}, "
        f"{', '.join(f'{e.strip()} AS v{i}' for i, e in enumerate(values))} "
        f"FROM runs r WHERE r.status <> {HELD}) AS c GROUP BY k0, k1, k2, k3, k4, k5"
    )


def downgrade() -> None:
    op.create_index(
        "ix_runs_agent_totals",
        "runs",
        ["agent_id", "status", "cost_source", "success", "task_id", "latency_ms", "cost_usd"],
    )
    op.create_index(
        "ix_runs_agent_version_totals",
        "runs",
        [
            "agent_id",
            "version",
            "status",
            "cost_source",
            "success",
            "task_id",
            "latency_ms",
            "cost_usd",
            "started_ns",
        ],
    )
    for name in ("runs_totals_insert", "runs_totals_delete", "runs_totals_update"):
        op.execute(
            f"DROP TRIGGER IF EXISTS {name}"
            + (" ON runs" if op.get_bind().dialect.name == "postgresql" else "")
        )
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS runs_totals()")
    op.drop_index("ix_run_deltas_agent", table_name="run_deltas")
    op.drop_table("run_deltas")
    op.drop_table("run_totals")

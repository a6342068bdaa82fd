"""What a grader key recorded stays the grader's (issue 37 items 1-3).

An agent key could rewrite a graded screened run: by sending its run key in
a trace of its own, by sending a span with the root's span id, or by
sending runs that name the grader's screening. Runs now say whether a span
from a grader key claims them (`grader_claim`), so a run of the agent's own
can be kept from taking a grader's run key or counting in a grader's
screening (collector.runs.claims), with an index of a screening's runs by
it. Spans from grader keys get a partial index of their own: counted per
trace, they tell a recomputation that a grader's span took the place of
another's under the same identity (storage.span_identity).

Runs stored before: a run whose root span came through a grader key is
marked (the root of a grader's claim is always the grader's); the next
recomputation of any run sets the exact value.

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

SCREENED = "screening_id IS NOT NULL"


def upgrade() -> None:
    op.add_column(
        "runs", sa.Column("grader_claim", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.execute(
        "UPDATE runs SET grader_claim = true WHERE root_span_id IS NOT NULL AND EXISTS "
        "(SELECT 1 FROM spans WHERE spans.trace_ref = runs.trace_ref "
        "AND spans.span_id = runs.root_span_id AND spans.grader)"
    )
    op.create_index(
        "ix_runs_screening_claims",
        "runs",
        ["agent_id", "screening_id", "grader_claim"],
        sqlite_where=sa.text(SCREENED),
        postgresql_where=sa.text(SCREENED),
    )
    op.create_index(
        "ix_spans_grader",
        "spans",
        ["trace_ref"],
        sqlite_where=sa.text("grader"),
        postgresql_where=sa.text("grader"),
    )


def downgrade() -> None:
    op.drop_index("ix_spans_grader", table_name="spans")
    op.drop_index("ix_runs_screening_claims", table_name="runs")
    op.drop_column("runs", "grader_claim")

"""Grades waiting for their run count against a per-owner quota and age out.

A grade posted before its run's spans waits for them, and used to wait
forever: four senders with one grader key stored 373 MB in 20 s of grades for
runs that never came. `grades.waiting_bytes` is what a row counts against its
owner while its run is not stored (0 once the run has met it), `grade_usage`
their sum per owner (one row read per grade posted), and `ix_grades_waiting`
lets the retention pass read the oldest waiting grades and nothing else
(docs/loop.md "Graded outcomes").

Existing grades are counted as the collector counts new ones: the text it
stores plus a fixed overhead per row, for rows whose run is not stored.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_WAITING = sa.text("waiting_bytes > 0")
_ROW_BYTES = 256  # storage.grades.ROW_BYTES when this revision was written
_TEXTS = ("agent", "run_key", "expected_output", "output", "error_class")


def upgrade() -> None:
    bind = op.get_bind()
    op.add_column(
        "grades",
        sa.Column("waiting_bytes", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.create_table(
        "grade_usage",
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("waiting_bytes", sa.BigInteger(), nullable=False),
    )
    if bind.dialect.name == "postgresql":
        size = " + ".join(f"coalesce(octet_length({c}), 0)" for c in _TEXTS)
        stored = "EXISTS (SELECT 1 FROM runs WHERE runs.id = grades.run_id)"
    else:
        size = " + ".join(f"coalesce(length(CAST({c} AS BLOB)), 0)" for c in _TEXTS)
        # SQLite's id index holds merged runs only (0012): both covering
        # indexes read once, not a lookup per grade that could not use them.
        stored = (
            "run_id IN (SELECT id FROM runs WHERE merged = 1 "
            "UNION ALL SELECT id FROM runs WHERE merged = 0)"
        )
    op.execute(f"UPDATE grades SET waiting_bytes = {_ROW_BYTES} + {size} WHERE NOT ({stored})")
    op.execute(
        "INSERT INTO grade_usage (owner, waiting_bytes) "
        "SELECT owner, sum(waiting_bytes) FROM grades WHERE waiting_bytes > 0 GROUP BY owner"
    )
    op.create_index(
        "ix_grades_waiting",
        "grades",
        ["graded_at"],
        sqlite_where=_WAITING,
        postgresql_where=_WAITING,
    )


def downgrade() -> None:
    op.drop_index("ix_grades_waiting", table_name="grades")
    op.drop_table("grade_usage")
    with op.batch_alter_table("grades") as batch:
        batch.drop_column("waiting_bytes")

"""Certificates: signing keys' public halves, certificates kept for good, the log.

docs/certificates.md. The private signing key is a file and never stored.
Certificates and log entries are append-only: triggers refuse an UPDATE or
a DELETE of either, so no code path, present or future, edits a proof.
Spans remember the key that sent them (`key_id`, null for those stored
before), since a run certificate names its root's key; a screening is found
by its id alone through a partial index of the screened runs.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

APPEND_ONLY = ("certificates", "certificate_log")
SCREENED = "screening_id IS NOT NULL"


def upgrade() -> None:
    op.add_column("spans", sa.Column("key_id", sa.Integer(), nullable=True))
    op.create_index(
        "ix_runs_screening",
        "runs",
        ["screening_id"],
        sqlite_where=sa.text(SCREENED),
        postgresql_where=sa.text(SCREENED),
    )
    op.create_table(
        "signing_keys",
        sa.Column("kid", sa.String(16), primary_key=True),
        sa.Column("public_key", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("retired_at", sa.Float()),
    )
    op.create_table(
        "certificates",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("statement_digest", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("agent_id", sa.String(36), nullable=False),
        sa.Column("subject_digest", sa.String(64), nullable=False),
        sa.Column("basis", sa.String(64)),
        sa.Column("supersedes", sa.String(64)),
        sa.Column("issued_at", sa.Text(), nullable=False),
        sa.Column("kid", sa.String(16), nullable=False),
        sa.Column("envelope", sa.Text(), nullable=False),
    )
    op.create_index("ix_certificates_subject", "certificates", ["agent_id", "subject", "id"])
    op.create_index("ix_certificates_supersedes", "certificates", ["supersedes"])
    op.create_table(
        "certificate_log",
        sa.Column("n", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("statement_digest", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("issued_at", sa.Text(), nullable=False),
        sa.Column("kid", sa.String(16), nullable=False),
        sa.Column("chain", sa.String(64), nullable=False),
    )
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute(
            "CREATE FUNCTION append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
        )
    for table in APPEND_ONLY:
        for change in ("UPDATE", "DELETE"):
            name = f"{table}_no_{change.lower()}"
            if postgresql:
                op.execute(
                    f"CREATE TRIGGER {name} BEFORE {change} ON {table} "
                    "FOR EACH ROW EXECUTE FUNCTION append_only()"
                )
            else:
                op.execute(
                    f"CREATE TRIGGER {name} BEFORE {change} ON {table} "
                    f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
                )


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for table in APPEND_ONLY:
        for change in ("update", "delete"):
            op.execute(
                f"DROP TRIGGER IF EXISTS {table}_no_{change}"
                + (f" ON {table}" if postgresql else "")
            )
    if postgresql:
        op.execute("DROP FUNCTION IF EXISTS append_only()")
    op.drop_table("certificate_log")
    op.drop_index("ix_certificates_supersedes", table_name="certificates")
    op.drop_index("ix_certificates_subject", table_name="certificates")
    op.drop_table("certificates")
    op.drop_table("signing_keys")
    op.drop_index("ix_runs_screening", table_name="runs")
    op.drop_column("spans", "key_id")

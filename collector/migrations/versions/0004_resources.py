"""Each distinct resource stored once; spans point at it by digest.

Span rows carried their resource's encoded bytes: one request of 200 spans
with a 1 MB resource attribute stored 200 MB. `resources` holds each
distinct resource once, keyed by the first 16 bytes of the SHA-256 of its
bytes, and `spans.resource` (the bytes) becomes `spans.resource_digest`.
Both steps are single statements over the table, with the digest computed
in SQL (PostgreSQL's sha256(); on SQLite the same function registered on
the migrating connection).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _digest(encoded: bytes) -> bytes:
    """The same digest as collector.storage.rows.resource_digest (a
    migration must not import code that later changes)."""
    return hashlib.sha256(encoded).digest()[:16]


def _digest_sql() -> str:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        return "substring(sha256({}) from 1 for 16)"
    dbapi = bind.connection.dbapi_connection
    dbapi.create_function("badge_resource_digest", 1, _digest, deterministic=True)  # type: ignore[union-attr]
    return "badge_resource_digest({})"


def upgrade() -> None:
    op.create_table(
        "resources",
        sa.Column("digest", sa.LargeBinary(), primary_key=True),
        sa.Column("encoded", sa.LargeBinary(), nullable=False),
        sa.Column("seen_at", sa.Float(), nullable=False),
    )
    digest = _digest_sql()
    op.execute(
        f"INSERT INTO resources (digest, encoded, seen_at) "
        f"SELECT {digest.format('resource')}, resource, MAX(received_at) FROM spans "
        "GROUP BY resource"
    )
    op.execute(f"UPDATE spans SET resource = {digest.format('resource')}")
    op.alter_column("spans", "resource", new_column_name="resource_digest")


def downgrade() -> None:
    op.alter_column("spans", "resource_digest", new_column_name="resource")
    op.execute(
        "UPDATE spans SET resource = "
        "(SELECT encoded FROM resources WHERE resources.digest = spans.resource)"
    )
    op.drop_table("resources")

"""The Alembic migrations produce exactly the schema `tables.py` declares."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from collector.storage.engine import create_schema, open_database
from collector.storage.migrate import current_revision, head_revision
from collector.storage.tables import metadata
from tests.integration.processes import cli


def test_migrated_schema_matches_the_table_definitions(tmp_path: Path) -> None:
    db = open_database(f"sqlite:///{tmp_path / 'm.db'}")
    create_schema(db)
    create_schema(db)  # idempotent: a second start changes nothing
    with db.reader.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    assert current_revision(db) == head_revision() is not None
    db.dispose()


def test_db_upgrade_command(tmp_path: Path) -> None:
    result = cli("db", "upgrade", "--database-url", f"sqlite:///{tmp_path / 'c.db'}")
    assert f"database at revision {head_revision()}" in result.stderr

"""The Alembic migrations produce exactly the schema `tables.py` declares."""

from __future__ import annotations

import multiprocessing
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from collector.storage.engine import create_schema, open_database
from collector.storage.migrate import current_revision, head_revision
from collector.storage.tables import metadata
from tests.integration.processes import cli


def test_migrated_schema_matches_the_table_definitions(database_url: str) -> None:
    db = open_database(database_url)
    create_schema(db)
    create_schema(db)  # idempotent: a second start changes nothing
    with db.reader.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    assert current_revision(db) == head_revision() is not None
    db.dispose()


def test_db_upgrade_command(database_url: str) -> None:
    result = cli("db", "upgrade", "--database-url", database_url)
    assert f"database at revision {head_revision()}" in result.stderr


def _upgrade_after(barrier: Any, url: str) -> None:
    db = open_database(url)
    barrier.wait(30)
    create_schema(db)
    db.dispose()


def test_processes_starting_together_migrate_one_after_the_other(database_url: str) -> None:
    """Collectors started at once on one empty database all come up (no lost race)."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    procs = [context.Process(target=_upgrade_after, args=(barrier, database_url)) for _ in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    db = open_database(database_url)
    assert current_revision(db) == head_revision()
    db.dispose()

"""The Alembic migrations produce exactly the schema `tables.py` declares."""

from __future__ import annotations

import multiprocessing
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from collector.storage.engine import create_schema, open_database
from collector.storage.keys import KeyStore
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


def _start_after(barrier: Any, url: str, keys_made: Any) -> None:
    """What `serve` does first: migrate, then create the first key if none exists."""
    db = open_database(url)
    barrier.wait(30)
    create_schema(db)
    if KeyStore(db).create_first("local") is not None:
        keys_made.put(1)
    db.dispose()


def test_processes_starting_together_migrate_one_after_the_other(database_url: str) -> None:
    """Collectors started at once on one empty database all come up, and make ONE key."""
    context = multiprocessing.get_context("spawn")
    barrier, keys_made = context.Barrier(4), context.Queue()
    procs = [
        context.Process(target=_start_after, args=(barrier, database_url, keys_made))
        for _ in range(4)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
    assert [proc.exitcode for proc in procs] == [0, 0, 0, 0]
    db = open_database(database_url)
    assert current_revision(db) == head_revision()
    assert len(KeyStore(db).list()) == 1
    assert keys_made.get(timeout=5) == 1 and keys_made.empty()
    db.dispose()

"""Databases already at the newest schema, for tests that do not test migrating.

Migrating an empty database through all the revisions cost 0.1 to 0.3 s of
CPU (more under coverage), and a few hundred tests each did it on a database
of their own (issue 43). A SQLite file is migrated once per process and
copied; PostgreSQL copies a template database (tests/conftest.py).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from collector.storage.engine import open_database
from collector.storage.migrate import create_schema


def migrate_to_head(url: str) -> None:
    db = open_database(url)
    try:
        create_schema(db)
    finally:
        db.dispose()  # a SQLite file is whole then, its write-ahead log folded in


@functools.cache
def sqlite_at_head() -> Path:
    """The file to copy; made on first use, deleted when the process exits."""
    directory = Path(tempfile.mkdtemp(prefix="badge-schema-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = directory / "collector.db"
    migrate_to_head(f"sqlite:///{path}")
    if path.with_name(f"{path.name}-wal").exists():
        raise RuntimeError(f"{path}: the write-ahead log outlived its connections")
    return path


def sqlite_copy_at_head(path: Path) -> str:
    """Put a copy of the migrated file at `path`; return its URL."""
    shutil.copyfile(sqlite_at_head(), path)
    return f"sqlite:///{path}"
